// Voices and speaking styles: voice id -> base frequency and harmonic timbre; emotion and
// voice_modify -> a style; and the tone burst of one spoken unit.
import { createHash } from 'node:crypto';
import type { SynthSettings, VoiceTone } from './types.js';

export interface VoiceShape {
  f0: number;
  /** Amplitudes of harmonics 1..6 (fundamental strongest). */
  harmonics: number[];
}

export interface Style {
  f0Mul: number;
  /** Relative frequency change across a burst (+ rising). */
  glide: number;
  vibHz: number;
  vibDepth: number;
  tremHz: number;
  tremDepth: number;
  /** Harmonic k is scaled by k^tilt (+ brighter, - darker). */
  tilt: number;
  attackS: number;
  releaseS: number;
  gain: number;
  /** 1: band-passed noise instead of a tone (whisper). */
  noise: number;
  /** tanh saturation amount, 0 = none. */
  drive: number;
  /** Sub-octave amplitude (fuller timbre). */
  sub: number;
}

const NEUTRAL: Style = {
  f0Mul: 1,
  glide: 0,
  vibHz: 0,
  vibDepth: 0,
  tremHz: 0,
  tremDepth: 0,
  tilt: 0,
  attackS: 0.015,
  releaseS: 0.025,
  gain: 1,
  noise: 0,
  drive: 0,
  sub: 0,
};

const EMOTIONS: Record<string, Partial<Style>> = {
  happy: { f0Mul: 1.12, glide: 0.08, vibHz: 5, vibDepth: 0.01, tilt: 0.3, gain: 1.05 },
  sad: { f0Mul: 0.88, glide: -0.08, tilt: -0.6, attackS: 0.04, releaseS: 0.06, gain: 0.75 },
  angry: { f0Mul: 1.05, tilt: 0.6, attackS: 0.004, drive: 2.5, gain: 1.15 },
  fearful: { f0Mul: 1.08, vibHz: 7, vibDepth: 0.03, tremHz: 9, tremDepth: 0.4, gain: 0.85 },
  disgusted: { f0Mul: 0.94, glide: -0.04, tilt: 0.2, tremHz: 4, tremDepth: 0.15, drive: 1 },
  surprised: { f0Mul: 1.15, glide: 0.25, attackS: 0.006, gain: 1.1 },
  calm: { f0Mul: 0.96, attackS: 0.045, releaseS: 0.07, tilt: -0.4, gain: 0.85 },
  fluent: { attackS: 0.025, releaseS: 0.035, vibHz: 4, vibDepth: 0.006, tilt: -0.1 },
  whisper: { noise: 1, gain: 0.5, attackS: 0.02, releaseS: 0.04 },
};

/** Peak amplitude of a voice at vol 1 before limiting. */
export const VOICE_LEVEL = 0.32;

/** Deterministic base frequency and timbre of a voice id, in a speech-like range. */
export function voiceShape(id: string): VoiceShape {
  const h = createHash('sha256').update(id).digest();
  const u = (i: number) => h[i]! / 255;
  const low = id.toLowerCase();
  const [lo, hi] = /female|woman|girl|lady|女/.test(low) ? [165, 255] : /male|man|boy|gentleman|男/.test(low) ? [85, 155] : [95, 240];
  const f0 = lo + (hi - lo) * u(0);
  const harmonics = [1, 0.35 + 0.3 * u(1), 0.15 + 0.35 * u(2), 0.1 + 0.3 * u(3), 0.05 + 0.2 * u(4), 0.03 + 0.12 * u(5)];
  return { f0, harmonics };
}

/** The speaking style of the settings: emotion, then voice_modify on top. */
export function styleFor(s: SynthSettings): Style {
  const st: Style = { ...NEUTRAL, ...(s.emotion ? EMOTIONS[s.emotion] : {}) };
  const vm = s.voiceModify ?? {};
  const p = (vm.pitch ?? 0) / 100;
  const i = (vm.intensity ?? 0) / 100;
  const t = (vm.timbre ?? 0) / 100;
  st.f0Mul *= 2 ** ((p * 4) / 12);
  st.tilt += p * 0.3 - i * 0.5 + Math.max(0, t) * 0.9;
  st.attackS = Math.max(0.002, st.attackS * (1 + i * 0.8));
  st.releaseS = Math.max(0.004, st.releaseS * (1 + i * 0.8));
  st.gain *= 1 - i * 0.25;
  st.drive += Math.max(0, -i) * 1.5;
  st.sub += Math.max(0, -t) * 0.45;
  return st;
}

/** The voices of a mix with normalised weights. */
export function mixOf(voices: VoiceTone[]): { shape: VoiceShape; weight: number }[] {
  const list = voices.length ? voices : [{ id: 'default', weight: 1 }];
  const total = list.reduce((a, v) => a + Math.max(0, v.weight), 0) || list.length;
  return list.map((v) => ({ shape: voiceShape(v.id), weight: (total ? Math.max(0, v.weight) : 1) / total }));
}

/** A small deterministic PRNG (mulberry32) returning [-1, 1). */
export function noiseSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2147483648 - 1;
  };
}

/** Raised-cosine envelope gain at frame j of n with attack/release lengths a/r (frames). */
export function envelope(j: number, n: number, a: number, r: number): number {
  if (j < a) return 0.5 - 0.5 * Math.cos((Math.PI * j) / a);
  const k = n - 1 - j;
  if (k < r) return 0.5 - 0.5 * Math.cos((Math.PI * k) / r);
  return 1;
}

/**
 * One tone burst (a spoken unit): the mix of voices at `pitchMul`, shaped by the style, with
 * soft attack/release reaching zero at both ends. `seed` gives each word its small intonation.
 */
export function renderBurst(
  frames: number,
  mix: { shape: VoiceShape; weight: number }[],
  style: Style,
  pitchMul: number,
  seed: number,
  sampleRate: number,
): Float32Array {
  const out = new Float32Array(frames);
  const jitter = 2 ** ((((seed % 1000) / 1000 - 0.5) * 0.7) / 12);
  const a = Math.max(1, Math.min(Math.round(style.attackS * sampleRate), Math.floor(frames / 3)));
  const r = Math.max(1, Math.min(Math.round(style.releaseS * sampleRate), Math.floor(frames / 3)));
  const nyquist = 0.45 * sampleRate;
  const level = VOICE_LEVEL * style.gain;
  if (style.noise > 0) {
    // Whisper: band-passed noise (about 500..3000 Hz), no pitch at all.
    const rnd = noiseSource(seed ^ 0x5bd1e995);
    const hp = Math.exp((-2 * Math.PI * 500) / sampleRate);
    const lp = 1 - Math.exp((-2 * Math.PI * Math.min(3000, nyquist)) / sampleRate);
    let x1 = 0;
    let y1 = 0;
    let l = 0;
    for (let j = 0; j < frames; j++) {
      const x = rnd();
      y1 = hp * (y1 + x - x1);
      x1 = x;
      l += lp * (y1 - l);
      out[j] = 1.6 * l * level * envelope(j, frames, a, r);
    }
    return out;
  }
  for (const { shape, weight } of mix) {
    const base = shape.f0 * style.f0Mul * pitchMul * jitter;
    const amps = shape.harmonics.map((h, k) => (base * (k + 1) < nyquist ? h * (k + 1) ** style.tilt : 0));
    const sum = amps.reduce((x, y) => x + y, 0) + style.sub;
    const norm = (level * weight) / sum;
    const driveNorm = style.drive > 0 ? 1 / Math.tanh(style.drive) : 1;
    let phase = 0;
    for (let j = 0; j < frames; j++) {
      const t = j / sampleRate;
      let f = base * (1 + style.glide * (j / frames - 0.5));
      if (style.vibDepth) f *= 1 + style.vibDepth * Math.sin(2 * Math.PI * style.vibHz * t);
      phase += (2 * Math.PI * f) / sampleRate;
      // sin(k·phase) by the Chebyshev recurrence.
      const s1 = Math.sin(phase);
      const c2 = 2 * Math.cos(phase);
      let prev = 0;
      let cur = s1;
      let v = 0;
      for (let k = 0; k < amps.length; k++) {
        v += amps[k]! * cur;
        const next = c2 * cur - prev;
        prev = cur;
        cur = next;
      }
      if (style.sub) v += style.sub * Math.sin(phase / 2);
      v /= sum;
      if (style.drive > 0) v = Math.tanh(style.drive * v) * driveNorm;
      let g = envelope(j, frames, a, r);
      if (style.tremDepth) g *= 1 - style.tremDepth * (0.5 + 0.5 * Math.sin(2 * Math.PI * style.tremHz * t));
      out[j]! += v * sum * norm * g;
    }
  }
  return out;
}
