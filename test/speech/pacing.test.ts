import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { streamT2a, textOf } from './pacing-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

/** Audio of a stream (ms), from its final extra_info. */
const audioMs = (s: Awaited<ReturnType<typeof streamT2a>>) => s.events.at(-1)!.body.extra_info.audio_length as number;
const firstAudioAt = (s: Awaited<ReturnType<typeof streamT2a>>) => s.events.find((e) => e.body.data?.status === 1)!.at;

/** The note of the newest T2A journal entry. */
async function lastNote(): Promise<string> {
  const entries = (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries;
  return entries[0].note;
}

describe('paced T2A streams (ttfa_ms, rtf, jitter_ms, stall_ms)', () => {
  const body = { text: textOf(18), audio_setting: { format: 'pcm', sample_rate: 16000 } };

  it('an unpaced stream comes at once; ttfa_ms=600 rtf=1 holds the first audio and plays out in real time', async () => {
    const fast = await streamT2a(emu.speechUrl, body);
    const length = audioMs(fast);
    expect(length).toBeGreaterThan(4000);
    const paced = await streamT2a(emu.speechUrl, body, { fault: 'ttfa_ms=600;rtf=1' });
    expect(audioMs(paced)).toBe(length);
    expect(firstAudioAt(paced)).toBeGreaterThanOrEqual(600);
    expect(paced.total).toBeGreaterThanOrEqual(0.9 * length);
    // The unpaced stream of the same text is well faster.
    expect(fast.total).toBeLessThan(paced.total / 2);
    // No audio ever ahead of real time after the first chunk (one chunk of slack).
    const first = firstAudioAt(paced);
    let sent = 0;
    for (const e of paced.events.filter((x) => x.body.data?.status === 1)) {
      expect(e.at - first).toBeGreaterThanOrEqual(sent - 60);
      sent += (Buffer.from(e.body.data.audio, 'hex').length / 2 / 16000) * 1000;
    }
    expect(await lastNote()).toMatch(/paced ttfa_ms=600 rtf=1: first audio after \d+ ms/);
  });

  it('rtf=4 delivers four seconds of audio per second', async () => {
    const paced = await streamT2a(emu.speechUrl, body, { fault: 'rtf=4' });
    const length = audioMs(paced);
    expect(paced.total).toBeGreaterThanOrEqual(0.9 * (length / 4));
    expect(paced.total).toBeLessThan(length / 4 + 3000);
  });

  it('stall_ms pauses once at stall_at_ms of audio; jitter_ms never reorders', async () => {
    const stalled = await streamT2a(emu.speechUrl, body, { fault: 'stall_ms=1200;stall_at_ms=1000;jitter_ms=30' });
    const audio = stalled.events.filter((e) => e.body.data?.status === 1);
    let sent = 0;
    let gapAt = -1;
    let biggest = 0;
    for (let i = 1; i < audio.length; i++) {
      sent += Buffer.from(audio[i - 1]!.body.data.audio, 'hex').length / 32;
      const gap = audio[i]!.at - audio[i - 1]!.at;
      if (gap > biggest) [biggest, gapAt] = [gap, sent];
    }
    expect(biggest).toBeGreaterThanOrEqual(1100);
    expect(gapAt).toBeGreaterThanOrEqual(1000);
    expect(gapAt).toBeLessThan(1000 + 400);
    expect(stalled.total).toBeGreaterThanOrEqual(1200);
  });

  it('jitter_ms=100 moves chunks around their real-time schedule (some earlier), never more than 100 ms early, in order', async () => {
    const paced = await streamT2a(emu.speechUrl, body, { fault: 'rtf=1;jitter_ms=100' });
    const audio = paced.events.filter((e) => e.body.data?.status === 1);
    const first = audio[0]!.at;
    let sent = 0;
    let earliest = 0;
    for (const e of audio) {
      const offset = e.at - first - sent;
      earliest = Math.min(earliest, offset);
      expect(offset).toBeGreaterThanOrEqual(-105);
      sent += Buffer.from(e.body.data.audio, 'hex').length / 32;
    }
    // Load only ever delays a chunk: one that came early was moved by the jitter.
    expect(earliest).toBeLessThan(-20);
    const seqs = paced.events.map((e) => e.at);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });
});
