// Energy-based activity detection: the non-silent stretches of mono samples.
import type { ActivitySpan } from './types.js';

export interface ActivityOptions {
  /** Gaps shorter than this are bridged (default 200 ms). */
  minGapMs?: number;
  /** Stretches shorter than this are dropped (default 60 ms). */
  minSpanMs?: number;
  /** Threshold below the loudest 20 ms window, in dB (default 35), never below -55 dBFS. */
  rangeDb?: number;
}

/** Non-silent stretches `[{startMs, endMs}]` found on 20 ms windows with a 10 ms hop. */
export function speechActivity(samples: Float32Array, sampleRate: number, opts: ActivityOptions = {}): ActivitySpan[] {
  const win = Math.max(1, Math.round(0.02 * sampleRate));
  const hop = Math.max(1, Math.round(0.01 * sampleRate));
  const rms: number[] = [];
  for (let at = 0; at + win <= samples.length || (at === 0 && samples.length); at += hop) {
    let s = 0;
    const end = Math.min(samples.length, at + win);
    for (let i = at; i < end; i++) s += samples[i]! * samples[i]!;
    rms.push(Math.sqrt(s / (end - at)));
    if (end === samples.length) break;
  }
  let peak = 0; // a loop: spreading hours of windows into Math.max overflows the stack
  for (const v of rms) if (v > peak) peak = v;
  const threshold = Math.max(10 ** (-55 / 20), peak * 10 ** (-(opts.rangeDb ?? 35) / 20));
  const toMs = (frame: number) => Math.round((frame * 1e6) / sampleRate) / 1000;
  const spans: ActivitySpan[] = [];
  let start = -1;
  rms.forEach((v, k) => {
    if (v >= threshold && start < 0) start = k;
    if ((v < threshold || k === rms.length - 1) && start >= 0) {
      const endIdx = v >= threshold ? k : k - 1;
      spans.push({ startMs: toMs(start * hop), endMs: toMs(Math.min(samples.length, endIdx * hop + win)) });
      start = -1;
    }
  });
  const merged: ActivitySpan[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.startMs - last.endMs < (opts.minGapMs ?? 200)) last.endMs = s.endMs;
    else merged.push({ ...s });
  }
  return merged.filter((s) => s.endMs - s.startMs >= (opts.minSpanMs ?? 60));
}
