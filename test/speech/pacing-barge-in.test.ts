/**
 * The barge-in recipe of docs/voice-agents.md: a client plays a paced stream, the user speaks after
 * about one second of audio, the client cuts the stream off, and the emulator's journal says where
 * the audio stopped and how long after the cut the last audio left.
 */
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { chunkAudio, hear, streamT2a, textOf } from './pacing-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

describe('barge-in on a paced stream', () => {
  it('an SSE disconnect after ~1 s of audio stops the stream at once; the journal times the cut', async () => {
    const body = { text: textOf(24), audio_setting: { format: 'pcm', sample_rate: 16000 } };
    const abort = new AbortController();
    let playedMs = 0;
    const heard = await streamT2a(emu.speechUrl, body, {
      fault: 'ttfa_ms=200;rtf=1',
      signal: abort.signal,
      onEvent: (e) => {
        if (e.body.data?.status !== 1) return;
        playedMs += Buffer.from(e.body.data.audio, 'hex').length / 32;
        // The user barges in once about a second of audio was played.
        if (playedMs >= 1000) abort.abort();
      },
    });
    const received = chunkAudio(heard);
    const receivedMs = received.length / 32;
    expect(receivedMs).toBeGreaterThanOrEqual(1000);
    expect(receivedMs).toBeLessThan(2000);
    expect(heard.events.some((e) => e.body.data?.status === 2)).toBe(false);

    // The emulator saw the client leave; the journal says so, with the pace and the cut's timing.
    let note = '';
    for (let i = 0; i < 50 && !/client left/.test(note); i++) {
      note = (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries[0].note ?? '';
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(note).toMatch(/^client left before the end of the stream; paced ttfa_ms=200 rtf=1: first audio after \d+ ms/);
    const m = /last audio (\d+) ms after the client left/.exec(note);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(250);
    const sentMs = Number(/(\d+) ms of audio over/.exec(note)![1]);
    // What the emulator sent is what the client received, give or take the chunk in flight.
    expect(sentMs).toBeGreaterThanOrEqual(receivedMs - 1);
    expect(sentMs).toBeLessThan(receivedMs + 400);

    // What the listener heard: the one utterance, cut, with the words up to the cut and no more.
    const heardNow = await hear(emu.speechUrl, received);
    expect(heardNow.utterances).toHaveLength(1);
    const [u] = heardNow.utterances;
    expect(u.complete).toBe(false);
    expect(u.full_text).toBe(body.text);
    const said = u.heard_text.split(' ');
    expect(said.length).toBeGreaterThan(0);
    expect(body.text.startsWith(u.heard_text)).toBe(true);
    expect(said.length).toBeLessThan(body.text.split(' ').length);
    expect(heardNow.anomalies.some((a: { kind: string }) => a.kind === 'cut')).toBe(true);
  });
});
