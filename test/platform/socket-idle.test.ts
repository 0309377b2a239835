import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { connect, wsUrl, type Client } from './conversation/conversation-helpers.js';

const { emu, ctl } = emulatorForFile({ freeze: true });

const PATHS = ['/api/v1/audio/conversation/stream', '/api/v1/audio/conversation/stream-text', '/v1/speech-to-text/stream'];
const settle = () => new Promise((r) => setTimeout(r, 150));
const isOpen = (c: Client) => c.ws.readyState === c.ws.OPEN;

describe('the platform sockets close after 120 s of emulator clock without a client message', () => {
  it('sockets that never send meta are closed with 1001 after an error event naming the rule', async () => {
    const clients = await Promise.all(PATHS.flatMap((p) => [0, 1].map(() => connect(wsUrl(emu.platformUrl, p, 'idle-key')))));
    await ctl.advance(119_000);
    await settle();
    expect(clients.every(isOpen)).toBe(true);
    await ctl.advance(1_000);
    for (const c of clients) {
      const close = await c.closed;
      expect(close.code).toBe(1001);
      expect(close.reason).toMatch(/idle timeout: no message from the client for 120 s/);
      const last = c.events().at(-1);
      expect(last.type).toBe('error');
      expect([10001, 'DEADLINE_EXCEEDED']).toContain(last.code);
    }
    const state = await ctl.state();
    expect(state.body.accounts.flatMap((a: any) => a.open_websockets ?? [])).toEqual([]);
  });

  it('a client message restarts the period; after meta a quiet conversation closes too', async () => {
    const conv = await connect(wsUrl(emu.platformUrl, PATHS[0]!, 'idle-key'));
    const stt = await connect(wsUrl(emu.platformUrl, PATHS[2]!, 'idle-key'));
    await ctl.advance(100_000);
    conv.sendJson({ voice_id: 'default' });
    await conv.waitFor('session_created');
    stt.sendJson({ meta: { audio_format: 'pcm16', language: 'en' } });
    await settle();
    await ctl.advance(100_000);
    await settle();
    expect([conv.events(), stt.events()]).toEqual([[expect.objectContaining({ type: 'session_created' })], []]);
    expect(isOpen(conv) && isOpen(stt)).toBe(true);
    await ctl.advance(20_000);
    expect((await conv.closed).code).toBe(1001);
    expect((await stt.closed).code).toBe(1001);
  });
});
