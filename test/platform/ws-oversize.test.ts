import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { connect, wsUrl } from './conversation/conversation-helpers.js';

const { emu } = emulatorForFile();
const LIMIT = 8 * 1024 * 1024;

describe('a WebSocket frame over 8 MiB', () => {
  it('closes the socket with 1009 every time (never a bare 1006)', async () => {
    const big = Buffer.alloc(LIMIT + 1024);
    for (const path of [
      '/v1/speech-to-text/stream',
      '/api/v1/audio/conversation/stream',
      '/api/v1/audio/conversation/stream-text',
      '/v1/speech-to-text/stream',
      '/api/v1/audio/conversation/stream',
    ]) {
      const c = await connect(wsUrl(emu.platformUrl, path, 'ws-oversize-key'));
      c.ws.on('error', () => undefined); // the client's own view of the cut is not what is tested
      c.ws.send(big);
      expect((await c.closed).code).toBe(1009);
    }
  });

  // Each socket with an `error` event in its protocol sends it, naming the limit, before the 1009 close.
  const cases = [
    { path: '/api/v1/audio/conversation/stream', code: '20003' },
    { path: '/api/v1/audio/conversation/stream-text', code: '20003' },
    { path: '/v1/speech-to-text/stream', code: 10001 },
  ];
  for (const { path, code } of cases) {
    for (const size of [LIMIT + 1, 3 * LIMIT]) {
      it(`${path}: a ${size}-byte frame gets an error event, then 1009`, async () => {
        const c = await connect(wsUrl(emu.platformUrl, path, 'ws-oversize-key'));
        c.ws.on('error', () => undefined);
        c.ws.send(Buffer.alloc(size));
        const close = await c.closed;
        expect(close.code).toBe(1009);
        expect(close.reason).toContain('8 MiB');
        const last = c.events().at(-1);
        expect(last).toMatchObject({ type: 'error', code });
        expect(last.message).toContain(String(LIMIT));
      });
    }
  }

  it('the speech socket sends task_failed, then 1009', async () => {
    const url = emu.speechUrl.replace(/^http/, 'ws') + '/ws/v1/t2a_v2';
    for (const size of [LIMIT + 1, 3 * LIMIT]) {
      const c = await connect(url, { authorization: 'Bearer ws-oversize-key' });
      c.ws.on('error', () => undefined);
      c.ws.send('x'.repeat(size));
      const close = await c.closed;
      expect(close.code).toBe(1009);
      const last = c.events().at(-1);
      expect(last).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2013 } });
      expect(last.base_resp.status_msg).toContain(String(LIMIT));
    }
  });
});
