/**
 * What a bad line did to a recording of the emulator's own speech (a caller made by `speak`, or any
 * synthesis played back): its speech level, the noise under it and their ratio, clipped samples,
 * dropouts (spans of digital silence that cut the sound off) and the silence before the talker starts.
 *
 * The emulator knows where its own words are (the signature record's word times): the speech level
 * is measured over the words and the noise over the planned pauses between them. A recording without
 * a signature gets the rougher measures of its 20 ms windows (level and noise by percentile).
 */
import type { TimedWord } from './align.js';

/** One utterance of the emulator's speech found in the recording: where its synthesis starts, and its words' times from there. */
export interface LineUtterance {
  startMs: number;
  words: readonly TimedWord[];
}

export type LineImpairmentKind = 'noise' | 'low_level' | 'clipping' | 'dropout' | 'leading_silence';

export interface LineImpairment {
  kind: LineImpairmentKind;
  at_ms: number;
  /** How long (dropouts, leading silence). */
  duration_ms?: number;
  /** The measure that found it: SNR for noise (dB), level for low level (dBFS), clipped samples for clipping. */
  value?: number;
}

export interface LineReport {
  /** The speech's RMS level (dBFS) over its words. */
  level_dbfs: number | null;
  /** The noise's RMS level (dBFS) in the pauses; null when the pauses are digital silence. */
  noise_dbfs: number | null;
  /** Speech against noise (dB); null without noise. */
  snr_db: number | null;
  /** Samples at full scale next to another at full scale (a flat top). */
  clipped_samples: number;
  /** Silence before the first utterance's signature (ms). */
  leading_silence_ms: number;
  /** What was found, by the thresholds below. */
  impairments: LineImpairment[];
}

/** Thresholds of the `impairments` list (docs/voice-agents.md). */
export const NOISE_SNR_DB = 40;
export const LOW_LEVEL_DBFS = -35;
export const CLIPPED_MIN = 10;
export const LEADING_SILENCE_MS = 100;
/** A dropout is at least this much digital silence (ms) inside a word. */
export const DROPOUT_MIN_MS = 10;

const WINDOW_MS = 20;
/** At most one step of 16-bit audio: digital silence (a dropout's samples are zeros; μ-law keeps them so). */
const SILENT = 1.5 / 32768;
/** A dropout's edges: the audio on both sides of it at least this far (dB) under the speech's RMS, never faded out. */
const EDGE_DB = -12;
/** A sample this close to full scale is at it. */
const FULL = 32700 / 32768;
/** Pauses are measured this far inside their edges (a word's tail and the next one's onset stay out). */
const PAUSE_MARGIN_MS = 10;

const dbfs = (rms: number) => Math.round(20 * Math.log10(rms) * 10) / 10;

const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]! : 0);
const quantile = (xs: ArrayLike<number>, p: number) => (xs.length ? Float64Array.from(xs).sort()[Math.floor(p * (xs.length - 1))]! : 0);

/** Noise's windows lie within STEADY_DB of each other (their middle half): white noise's 20 ms windows within about 1 dB. */
const STEADY_DB = 3;

function steady(windows: number[]): boolean {
  if (windows.length < 3) return false;
  return 20 * Math.log10(quantile(windows, 0.75) / quantile(windows, 0.25)) <= STEADY_DB;
}

/** What one pass over the recording finds: the RMS of each 20 ms window, the runs of digital silence, the clipped samples. */
interface Scan {
  /** RMS of window k, which holds samples [k·n, (k+1)·n), n = `windowFrames`. */
  windows: Float64Array;
  windowFrames: number;
  /** Runs of digital silence of at least DROPOUT_MIN_MS, as [startMs, endMs). */
  runs: [number, number][];
  clipped: number;
}

function scan(samples: Float32Array, rate: number): Scan {
  const n = Math.max(1, Math.round((WINDOW_MS * rate) / 1000));
  const windows = new Float64Array(Math.floor(samples.length / n));
  const minRun = Math.round((DROPOUT_MIN_MS * rate) / 1000);
  const runs: [number, number][] = [];
  let sum = 0;
  let quietFrom = -1;
  let fullRun = 0;
  let clipped = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i]!;
    const a = Math.abs(v);
    sum += v * v;
    if ((i + 1) % n === 0 && (i + 1) / n <= windows.length) {
      windows[(i + 1) / n - 1] = Math.sqrt(sum / n);
      sum = 0;
    }
    if (a < SILENT) {
      if (quietFrom < 0) quietFrom = i;
    } else if (quietFrom >= 0) {
      if (i - quietFrom >= minRun) runs.push([(quietFrom * 1000) / rate, (i * 1000) / rate]);
      quietFrom = -1;
    }
    // A flat top: two or more samples in a row at full scale.
    if (a >= FULL) fullRun++;
    else {
      if (fullRun >= 2) clipped += fullRun;
      fullRun = 0;
    }
  }
  if (quietFrom >= 0 && samples.length - quietFrom >= minRun) runs.push([(quietFrom * 1000) / rate, (samples.length * 1000) / rate]);
  if (fullRun >= 2) clipped += fullRun;
  return { windows, windowFrames: n, runs, clipped };
}

/** The RMS of the windows that lie whole inside [fromMs, toMs). */
function windowsIn(sc: Scan, rate: number, fromMs: number, toMs: number): number[] {
  const first = Math.ceil((fromMs * rate) / 1000 / sc.windowFrames);
  const last = Math.min(sc.windows.length, Math.floor((toMs * rate) / 1000 / sc.windowFrames));
  const out: number[] = [];
  for (let k = Math.max(0, first); k < last; k++) out.push(sc.windows[k]!);
  return out;
}

/**
 * The runs of digital silence that cut the audio off: loud on both sides (within 1 ms of each edge).
 * The emulator's own pauses fade out and in (their edges are some 40 dB under the speech).
 */
function cutsIn(samples: Float32Array, rate: number, runs: [number, number][], level: number): LineImpairment[] {
  const edge = level * 10 ** (EDGE_DB / 20);
  const n = Math.max(1, Math.round(rate / 1000));
  const peak = (from: number, to: number) => {
    let p = 0;
    for (let i = Math.max(0, from); i < Math.min(samples.length, to); i++) p = Math.max(p, Math.abs(samples[i]!));
    return p;
  };
  const out: LineImpairment[] = [];
  for (const [a, b] of runs) {
    const start = Math.round((a * rate) / 1000);
    const end = Math.round((b * rate) / 1000);
    if (start === 0 || end >= samples.length) continue;
    if (peak(start - n, start) >= edge && peak(end, end + n) >= edge) out.push({ kind: 'dropout', at_ms: Math.round(a), duration_ms: Math.round(b - a) });
  }
  return out;
}

/** Words and pauses in recording time (ms), pauses shrunk by PAUSE_MARGIN_MS on each side. */
function plannedSpans(utterances: readonly LineUtterance[]): { words: [number, number][]; pauses: [number, number][] } {
  const words: [number, number][] = [];
  const pauses: [number, number][] = [];
  for (const u of utterances) {
    let lastEnd: number | null = null;
    for (const w of u.words) {
      const a = u.startMs + w.startMs;
      const b = u.startMs + w.endMs;
      if (lastEnd !== null && a - lastEnd > 2 * PAUSE_MARGIN_MS + WINDOW_MS) pauses.push([lastEnd + PAUSE_MARGIN_MS, a - PAUSE_MARGIN_MS]);
      words.push([a, b]);
      lastEnd = b;
    }
  }
  // Before the first signature: the line before the talker starts (noise, when there is any).
  const first = utterances[0]?.startMs ?? 0;
  if (first > 2 * PAUSE_MARGIN_MS + WINDOW_MS) pauses.push([PAUSE_MARGIN_MS, first - PAUSE_MARGIN_MS]);
  return { words, pauses };
}

export function analyzeLine(samples: Float32Array, rate: number, utterances: readonly LineUtterance[]): LineReport {
  const durationMs = (samples.length * 1000) / rate;
  const loud = (w: number) => w >= SILENT;
  const sc = scan(samples, rate);
  let level: number;
  let noiseWindows: number[];
  let leading: number;
  if (utterances.length) {
    const { words, pauses } = plannedSpans(utterances);
    // Digital silence inside a word is a dropout: it is left out of the speech level.
    const speech = words.flatMap(([a, b]) => windowsIn(sc, rate, a, b)).filter(loud);
    level = Math.sqrt(speech.reduce((s, w) => s + w * w, 0) / Math.max(1, speech.length));
    // The emulator's pauses are digital silence; on a noisy line only dropouts are. Less digital
    // silence than half the planned pauses (those inside the recording): a noisy line. This holds
    // where the audio is not where it was planned (a span repeated or skipped) too.
    const silentMs = sc.runs.reduce((n, [a, b]) => n + (b - a), 0);
    const pauseMs = pauses.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, durationMs) - a), 0);
    const noisy = pauseMs > 0 && silentMs < pauseMs / 2;
    const inPauses = noisy ? pauses.flatMap(([a, b]) => windowsIn(sc, rate, a, b)).filter(loud) : [];
    // Noise is steady (its windows within a few dB of each other); sound of another kind in the pauses
    // (words not where they were planned, a codec's smear) is not taken for it.
    noiseWindows = steady(inPauses) ? inPauses : [];
    leading = Math.round(utterances[0]!.startMs);
  } else {
    const heard = Array.from(sc.windows).filter(loud);
    level = quantile(heard, 0.9);
    const floor = quantile(sc.windows, 0.1);
    noiseWindows = loud(floor) ? [floor] : [];
    const firstLoud = sc.windows.findIndex((w) => w >= 10 ** (-50 / 20));
    leading = firstLoud < 0 ? Math.round(durationMs) : firstLoud * WINDOW_MS;
  }
  const dropouts = cutsIn(samples, rate, sc.runs, level);
  const noise = noiseWindows.length ? median(noiseWindows) : 0;
  const levelDbfs = level > 0 ? dbfs(level) : null;
  const noiseDbfs = noise > 0 ? dbfs(noise) : null;
  const snr = noise > 0 && level > 0 ? Math.round(10 * Math.log10(Math.max(level * level - noise * noise, 1e-12) / (noise * noise)) * 10) / 10 : null;
  const clipped = sc.clipped;

  const impairments: LineImpairment[] = [];
  if (leading >= LEADING_SILENCE_MS) impairments.push({ kind: 'leading_silence', at_ms: 0, duration_ms: leading });
  if (snr !== null && snr < NOISE_SNR_DB) impairments.push({ kind: 'noise', at_ms: 0, value: snr });
  if (levelDbfs !== null && levelDbfs < LOW_LEVEL_DBFS) impairments.push({ kind: 'low_level', at_ms: 0, value: levelDbfs });
  if (clipped >= CLIPPED_MIN) impairments.push({ kind: 'clipping', at_ms: 0, value: clipped });
  impairments.push(...dropouts);
  return { level_dbfs: levelDbfs, noise_dbfs: noiseDbfs, snr_db: snr, clipped_samples: clipped, leading_silence_ms: leading, impairments };
}
