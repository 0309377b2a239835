import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { connect, wsUrl } from './conversation/conversation-helpers.js';

/** A large text frame on a conversation socket: kept in the journal bounded, and marked `truncated` as its entry promises. */
const { emu, ctl } = emulatorForFile({ resetEach: true });
const FOUR_MIB = 4 * 1024 * 1024;

async function sentFrame(frame: string) {
  const c = await connect(wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream', 'frame-truncated-key'));
  c.ws.send(frame);
  c.ws.close();
  await c.closed;
  for (let i = 0; i < 100; i++) {
    const entry = (await ctl.journal({ limit: 1, path: '/api/v1/audio/conversation/stream' })).body.entries[0];
    const found = entry?.ws_frames?.find((f: any) => f.dir === 'in' && f.type === 'text');
    if (found && entry.status !== null) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the frame never reached the journal');
}

describe('a 4 MiB text frame on a conversation socket', () => {
  it('JSON with a 4 MiB string: its content bounded, the frame marked truncated', async () => {
    const frame = await sentFrame(JSON.stringify({ type: 'meta', voice_id: 'v', text: 'x'.repeat(FOUR_MIB) }));
    expect(frame.truncated).toBe(true);
    expect(JSON.stringify(frame.content).length).toBeLessThan(8192);
    expect(frame.content.text).toMatch(/…\(4194304 chars\)$/);
  });

  it('text that is not JSON: bounded and marked truncated', async () => {
    const frame = await sentFrame('y'.repeat(FOUR_MIB));
    expect(frame.truncated).toBe(true);
    expect(String(frame.content).length).toBeLessThan(8192);
  });

  it('a small frame is kept whole, without the mark', async () => {
    const frame = await sentFrame(JSON.stringify({ type: 'meta', voice_id: 'v' }));
    expect(frame.truncated).toBeUndefined();
  });
});
