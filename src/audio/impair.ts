/**
 * What a bad line, a quiet or loud talker and a lossy codec do to a caller's audio: pure functions over
 * mono PCM16, deterministic for a given random source (the caller passes a seeded one).
 *
 * The chain runs in the order a call would: leading silence (the talker starts late), gain (too quiet,
 * or too loud), clipping (a loud talker overdriving the microphone), background noise at a signal-to-noise
 * ratio, dropouts (packets lost: spans of silence), then a codec round trip (8 kHz μ-law, or MP3 at a low
 * bitrate, and back to the asked rate). Dropouts never fall in the emulator's signature at the start
 * (its first 560 ms after the leading silence): the signature is how the emulator knows what was said.
 */
import { SIGNATURE_SECONDS } from './marker.js';
import { mulawByte } from './encode/mulaw.js';
import { noiseSource } from './voice.js';

export interface Impairments {
  /** Silence before the talker starts, ms. */
  leadingSilenceMs?: number;
  /** Gain in dB: negative is a quiet talker; positive drives the clipping below. */
  gainDb?: number;
  /** Overdrive in dB above full scale, then hard clipping at full scale (a loud talker). */
  clipDb?: number;
  /** Background noise: the ratio of the speech's level to the noise's, in dB (lower is noisier). */
  noiseDb?: number;
  /** How many spans are lost (packet loss), each `dropoutMs` long. */
  dropouts?: number;
  dropoutMs?: number;
  /** A codec round trip: through 8 kHz μ-law, or MP3 at a low bitrate. */
  codec?: 'mulaw' | 'mp3';
}

/** Where each impairment was put, for the answer's report. */
export interface ImpairmentReport {
  dropoutsAtMs: number[];
  noiseRms: number;
  speechRms: number;
  clippedSamples: number;
}

export type Random = () => number;

/** A seeded source for the impairments in [0, 1): the engine's own PRNG (voice.ts) from a 32-bit hash of the seed text. */
export function seededRandom(seed: string): Random {
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  const noise = noiseSource(h);
  return () => (noise() + 1) / 2;
}

const FULL_SCALE = 32767;

/** RMS of the samples louder than -50 dBFS (the speech, not the pauses between words). */
function activeRms(x: Float64Array): number {
  const floor = FULL_SCALE * 10 ** (-50 / 20);
  let sum = 0;
  let n = 0;
  for (const v of x) {
    if (Math.abs(v) < floor) continue;
    sum += v * v;
    n++;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

/** A standard normal draw (Box–Muller), from the seeded source. */
function gaussian(random: Random): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/**
 * The samples with every impairment but the codec applied (the codec needs the encoders: `codecRoundTrip`).
 * `random` decides the noise and where the dropouts fall.
 */
export function impair(pcm: Int16Array, sampleRate: number, imp: Impairments, random: Random): { pcm: Int16Array; report: ImpairmentReport } {
  const lead = Math.round(((imp.leadingSilenceMs ?? 0) * sampleRate) / 1000);
  const x = new Float64Array(lead + pcm.length);
  for (let i = 0; i < pcm.length; i++) x[lead + i] = pcm[i]!;

  const gain = 10 ** (((imp.gainDb ?? 0) + (imp.clipDb ?? 0)) / 20);
  if (gain !== 1) for (let i = 0; i < x.length; i++) x[i]! *= gain;

  let clippedSamples = 0;
  for (let i = 0; i < x.length; i++) {
    if (x[i]! > FULL_SCALE) ((x[i] = FULL_SCALE), clippedSamples++);
    else if (x[i]! < -FULL_SCALE - 1) ((x[i] = -FULL_SCALE - 1), clippedSamples++);
  }

  const speechRms = activeRms(x);
  let noiseRms = 0;
  if (imp.noiseDb !== undefined) {
    noiseRms = speechRms / 10 ** (imp.noiseDb / 20);
    for (let i = 0; i < x.length; i++) x[i]! += noiseRms * gaussian(random);
  }

  const dropoutsAtMs: number[] = [];
  const count = imp.dropouts ?? 0;
  if (count > 0) {
    const span = Math.round(((imp.dropoutMs ?? 40) * sampleRate) / 1000);
    const first = lead + Math.ceil(SIGNATURE_SECONDS * sampleRate);
    const room = x.length - first - span;
    for (let k = 0; k < count && room > 0; k++) {
      const at = first + Math.floor(random() * room);
      x.fill(0, at, at + span);
      dropoutsAtMs.push(Math.round((at * 1000) / sampleRate));
    }
    dropoutsAtMs.sort((a, b) => a - b);
  }

  const out = new Int16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(x[i]!)));
  return { pcm: out, report: { dropoutsAtMs, noiseRms: Math.round(noiseRms), speechRms: Math.round(speechRms), clippedSamples } };
}

/**
 * Linear resampling with a moving-average low-pass when going down (a phone line's band, not a studio's:
 * what the impairment wants).
 */
export function resampleLinear(pcm: Int16Array, from: number, to: number): Int16Array {
  if (from === to) return pcm;
  let src: Float64Array = Float64Array.from(pcm);
  if (to < from) {
    const width = Math.max(1, Math.round(from / to));
    const smoothed = new Float64Array(src.length);
    let acc = 0;
    for (let i = 0; i < src.length; i++) {
      acc += src[i]!;
      if (i >= width) acc -= src[i - width]!;
      smoothed[i] = acc / Math.min(i + 1, width);
    }
    src = smoothed;
  }
  const n = Math.max(1, Math.round((pcm.length * to) / from));
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const pos = (i * from) / to;
    const j = Math.floor(pos);
    const f = pos - j;
    const a = src[Math.min(j, src.length - 1)]!;
    const b = src[Math.min(j + 1, src.length - 1)]!;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(a + (b - a) * f)));
  }
  return out;
}

/** One μ-law byte back to its 16-bit sample (the inverse of G.711's encoding). */
function mulawSample(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

/** Through an 8 kHz μ-law telephone channel and back to `sampleRate`. */
export function mulawRoundTrip(pcm: Int16Array, sampleRate: number): Int16Array {
  const narrow = resampleLinear(pcm, sampleRate, 8000);
  const back = new Int16Array(narrow.length);
  for (let i = 0; i < narrow.length; i++) back[i] = mulawSample(mulawByte(narrow[i]!));
  return resampleLinear(back, 8000, sampleRate);
}
