// Hearing a long recording of the speech engine: each sentence break compares the offsets of every
// sentence (a repeat or a skip), and each comparison counts the landmarks of a bounded stretch of what
// follows, not of the whole rest of the recording. Counted to the end, an hour's plan cost the fourth
// power of its sentences: 13 minutes of speech held the event loop for two minutes, an hour for hours.
// The plan here is the speech engine's shape (words that touch, comma and sentence pauses) without
// synthesizing it; the test's timeout is the bound, far above what the alignment takes.
import { describe, expect, it } from 'vitest';
import { alignSpeech } from '../../src/audio/hear/align-speech.js';
import type { TimedWord } from '../../src/audio/hear/align.js';
import { SIGNATURE_SECONDS } from '../../src/audio/marker.js';

const WORD_MS = 300;
const COMMA_MS = 200;
const SENTENCE_MS = 450;

/** `sentences` sentences of two runs of four touching words (a comma between), after the signature. */
function plan(sentences: number): { words: TimedWord[]; durationMs: number } {
  const words: TimedWord[] = [];
  let t = SIGNATURE_SECONDS * 1000 + 100;
  for (let s = 0; s < sentences; s++) {
    for (let half = 0; half < 2; half++) {
      for (let w = 0; w < 4; w++) {
        words.push({ text: `w${s}x${half}x${w}`, startMs: t, endMs: t + WORD_MS });
        t += WORD_MS;
      }
      t += half === 0 ? COMMA_MS : SENTENCE_MS;
    }
  }
  return { words, durationMs: t };
}

/** The sound of the plan as heard: one stretch per run of touching words, the signature first. */
function soundOf(words: TimedWord[]): { startMs: number; endMs: number }[] {
  const spans = [{ startMs: 0, endMs: SIGNATURE_SECONDS * 1000 - 100 }];
  for (const w of words) {
    const last = spans[spans.length - 1]!;
    if (w.startMs <= last.endMs) last.endMs = w.endMs;
    else spans.push({ startMs: w.startMs, endMs: w.endMs });
  }
  return spans;
}

describe('hear: the speech engine alignment of a long recording', () => {
  it('an hour of speech (1,200 sentences) is aligned whole, without anomalies, within the test timeout', { timeout: 30_000 }, () => {
    const { words, durationMs } = plan(1200);
    expect(durationMs).toBeGreaterThan(3_600_000);
    const heard = alignSpeech(words, durationMs, 0, durationMs, soundOf(words));
    expect(heard.anomalies).toEqual([]);
    expect(heard.complete).toBe(true);
    expect(heard.words).toHaveLength(words.length);
  });

  it('a sentence heard twice in the middle of an hour is one repeat, and the words after it are placed after the repeat', { timeout: 30_000 }, () => {
    const { words, durationMs } = plan(1200);
    const sound = soundOf(words);
    // Sentence 600 (its two runs) heard again right after it: everything after moves by its length.
    const first = words[600 * 8]!;
    const next = words[601 * 8]!;
    const shift = next.startMs - first.startMs;
    const spans = sound.flatMap((s) => (s.startMs < next.startMs ? [s] : []));
    for (const s of sound.filter((x) => x.startMs >= first.startMs && x.startMs < next.startMs))
      spans.push({ startMs: s.startMs + shift, endMs: s.endMs + shift });
    for (const s of sound.filter((x) => x.startMs >= next.startMs)) spans.push({ startMs: s.startMs + shift, endMs: s.endMs + shift });
    const heard = alignSpeech(words, durationMs, 0, durationMs + shift, spans);
    expect(heard.anomalies.map((a) => a.kind)).toEqual(['repeat']);
    expect(Math.abs(heard.anomalies[0]!.duration_ms - shift)).toBeLessThanOrEqual(1);
    const last = heard.words[heard.words.length - 1]!;
    expect(Math.abs(last.start_ms - (words[words.length - 1]!.startMs + shift))).toBeLessThanOrEqual(1);
  });
});
