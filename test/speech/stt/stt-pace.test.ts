// Speech-to-text's event stream paced on the emulator clock (speech-current.md E3, `stt.stream_pace`).
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { speak, STT_KEY, sttForm } from './stt-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

/** Opens the stream and reads its events as they come; `next(n)` resolves once n events have arrived. */
async function openStream(bytes: Buffer) {
  const res = await fetch(`${emu.speechUrl}/v1/speech_to_text`, {
    method: 'POST',
    headers: { authorization: `Bearer ${STT_KEY}` },
    body: sttForm({ fields: { stream: 'true' }, files: [{ bytes }] }),
  });
  expect(res.status).toBe(200);
  const events: Record<string, unknown>[] = [];
  let text = '';
  const reader = res.body!.getReader();
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
      const blocks = text.split('\n\n');
      text = blocks.pop()!;
      for (const b of blocks) events.push(JSON.parse(b.replace(/^data: /, '')));
    }
  })();
  const settle = () => new Promise((r) => setTimeout(r, 150));
  return { events, settle, done: pump };
}

describe('stt.stream_pace', () => {
  it('each delta leaves once the emulator clock is that fraction of its sentence end past the request; 0 sends them at once', async () => {
    const spoken = await speak(emu.speechUrl, 'First sentence here. Second one follows.');
    expect(spoken.sentences).toHaveLength(2);
    expect((await ctl.putAccount(STT_KEY, { speech_settings: { stt: { stream_pace: 1 } } })).status).toBe(200);
    await ctl.freeze();
    const s = await openStream(spoken.wav);
    await s.settle();
    expect(s.events).toEqual([]); // nothing is due while the clock stands still
    await ctl.advance(Math.ceil(spoken.sentences[0]!.end * 1000));
    await s.settle();
    expect(s.events.map((e) => e.delta)).toEqual(['First sentence here. ']);
    await ctl.advance(spoken.durationMs);
    await s.done;
    expect(s.events.map((e) => e.finish)).toEqual([false, false, true]);

    // back to 0: everything at once, the clock still frozen
    expect((await ctl.putAccount(STT_KEY, { speech_settings: { stt: { stream_pace: 0 } } })).body.speech_settings).toEqual({ stt: { stream_pace: 0 } });
    const now = await openStream(spoken.wav);
    await now.done;
    expect(now.events).toHaveLength(3);
  });

  it('the setting is checked: a negative pace is refused naming the field', async () => {
    const r = await ctl.putAccount(STT_KEY, { speech_settings: { stt: { stream_pace: -1 } } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('speech_settings.stt.stream_pace');
  });
});
