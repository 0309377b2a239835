import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { connect, wsUrl } from './conversation-helpers.js';

const { emu } = emulatorForFile();

describe('a WebSocket frame over 8 MiB', () => {
  it('closes the socket with 1009 every time (never a bare 1006)', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024 + 1024);
    for (const path of ['/v1/speech-to-text/stream', '/api/v1/audio/conversation/stream', '/api/v1/audio/conversation/stream-text', '/v1/speech-to-text/stream', '/api/v1/audio/conversation/stream']) {
      const c = await connect(wsUrl(emu.platformUrl, path, 'ws-oversize-key'));
      c.ws.on('error', () => undefined); // the client's own view of the cut is not what is tested
      c.ws.send(big);
      expect((await c.closed).code).toBe(1009);
    }
  });
});
