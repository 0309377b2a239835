// close() is the subject: the test starts and closes its own emulator.
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.js';

describe('close()', () => {
  it('ends even while a client holds a long stream open without reading it: the stream ends within the grace period', async () => {
    const emu = await startTestEmulator();
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer close-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'speech-02-turbo',
        text: 'A long text that keeps streaming. '.repeat(250),
        stream: true,
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format: 'pcm' },
      }),
    });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false); // the stream has begun; the client stops reading here
    const t0 = performance.now();
    await emu.close();
    expect(performance.now() - t0).toBeLessThan(10_000);
    // what the client holds ends (at an event boundary when the buffers took the last event, else cut), never a hang
    const outcome = await (async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    })().catch(() => 'cut');
    expect(['ended', 'cut']).toContain(outcome);
  });
});
