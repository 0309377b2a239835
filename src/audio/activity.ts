// Energy-based activity detection: the non-silent stretches of mono samples.
import type { ActivitySpan } from './types.js';

export interface ActivityOptions {
  /** Gaps shorter than this are bridged (default 200 ms). */
  minGapMs?: number;
  /** Stretches shorter than this are dropped (default 60 ms). */
  minSpanMs?: number;
  /** Threshold below the loudest 20 ms window, in dB (default 35), never below -55 dBFS. */
  rangeDb?: number;
  /** The threshold never below this RMS either (a noisy line: above its noise floor). */
  minRms?: number;
}

/** Non-silent stretches `[{startMs, endMs}]` found on 20 ms windows with a 10 ms hop. */
export function speechActivity(samples: Float32Array, sampleRate: number, opts: ActivityOptions = {}): ActivitySpan[] {
  const meter = new ActivityMeter(sampleRate);
  meter.push(samples);
  return meter.spans(opts);
}

/**
 * The same detector fed slice by slice (audio decoded in slices): it keeps the RMS of each window and
 * the few samples a window may still need, never the audio itself.
 */
export class ActivityMeter {
  private readonly win: number;
  private readonly hop: number;
  private rms = new Float64Array(1024);
  private count = 0;
  private pending = new Float32Array(0);
  /** Index of the first pending sample in the whole audio, and of the next window's start. */
  private pendingAt = 0;
  private nextAt = 0;
  private total = 0;

  constructor(readonly sampleRate: number) {
    this.win = Math.max(1, Math.round(0.02 * sampleRate));
    this.hop = Math.max(1, Math.round(0.01 * sampleRate));
  }

  push(slice: Float32Array): void {
    const buf = new Float32Array(this.pending.length + slice.length);
    buf.set(this.pending);
    buf.set(slice, this.pending.length);
    this.total += slice.length;
    for (; this.nextAt + this.win <= this.pendingAt + buf.length; this.nextAt += this.hop) {
      const from = this.nextAt - this.pendingAt;
      let s = 0;
      for (let i = from; i < from + this.win; i++) s += buf[i]! * buf[i]!;
      this.add(Math.sqrt(s / this.win));
    }
    const keep = Math.min(buf.length, Math.max(0, this.nextAt - this.pendingAt));
    this.pending = buf.slice(keep);
    this.pendingAt += keep;
  }

  private add(v: number): void {
    if (this.count === this.rms.length) {
      const grown = new Float64Array(this.rms.length * 2);
      grown.set(this.rms);
      this.rms = grown;
    }
    this.rms[this.count++] = v;
  }

  spans(opts: ActivityOptions = {}): ActivitySpan[] {
    const { win, hop, sampleRate, total } = this;
    // Audio shorter than one window is measured whole.
    if (this.count === 0 && total > 0) {
      let s = 0;
      for (const v of this.pending) s += v * v;
      this.add(Math.sqrt(s / total));
    }
    const rms = this.rms.subarray(0, this.count);
    let peak = 0; // a loop: spreading hours of windows into Math.max overflows the stack
    for (const v of rms) if (v > peak) peak = v;
    const threshold = Math.max(10 ** (-55 / 20), peak * 10 ** (-(opts.rangeDb ?? 35) / 20), opts.minRms ?? 0);
    const toMs = (frame: number) => Math.round((frame * 1e6) / sampleRate) / 1000;
    const spans: ActivitySpan[] = [];
    let start = -1;
    rms.forEach((v, k) => {
      if (v >= threshold && start < 0) start = k;
      if ((v < threshold || k === rms.length - 1) && start >= 0) {
        const endIdx = v >= threshold ? k : k - 1;
        spans.push({ startMs: toMs(start * hop), endMs: toMs(Math.min(total, endIdx * hop + win)) });
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
}
