// The samples Flite writes (a 16-bit mono RIFF WAVE) and the one resampler the speech engine uses.

export interface Wave {
  sampleRate: number;
  samples: Int16Array;
}

/** Reads the mono 16-bit WAVE Flite writes (fmt and data chunks). */
export function readWave(bytes: Uint8Array): Wave {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('Flite wrote no RIFF WAVE');
  let sampleRate = 0;
  for (let at = 12; at + 8 <= bytes.length;) {
    const size = v.getUint32(at + 4, true);
    if (tag(at) === 'fmt ') sampleRate = v.getUint32(at + 12, true);
    if (tag(at) === 'data') {
      const n = Math.floor(Math.min(size, bytes.length - at - 8) / 2);
      const samples = new Int16Array(n);
      for (let i = 0; i < n; i++) samples[i] = v.getInt16(at + 8 + 2 * i, true);
      return { sampleRate, samples };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('Flite wrote a WAVE without data');
}

const HALF_TAPS = 8;
const tables = new Map<string, { phases: number; half: number; taps: Float32Array }>();

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The filter of a rate pair: output sample i sits at source position i·from/to, whose fractional part
 * takes `phases` values (to / gcd); each phase has 2·half Hann-windowed sinc taps, computed once.
 */
function tableFor(fromRate: number, toRate: number) {
  const key = `${fromRate}>${toRate}`;
  let t = tables.get(key);
  if (!t) {
    const cutoff = Math.min(1, toRate / fromRate);
    const half = Math.ceil(HALF_TAPS / cutoff);
    const phases = toRate / gcd(fromRate, toRate);
    const taps = new Float32Array(phases * 2 * half);
    for (let ph = 0; ph < phases; ph++) {
      const frac = ((ph * fromRate) % toRate) / toRate;
      for (let q = 0; q < 2 * half; q++) {
        const x = frac - (q - half + 1);
        const w = 0.5 + 0.5 * Math.cos((Math.PI * x) / (half + 1));
        const arg = Math.PI * x * cutoff;
        taps[ph * 2 * half + q] = w * (arg === 0 ? cutoff : (cutoff * Math.sin(arg)) / arg);
      }
    }
    t = { phases, half, taps };
    tables.set(key, t);
  }
  return t;
}

/**
 * `frames` samples at `toRate` from the source at `fromRate` starting at source sample `from` (a
 * whole number), by a Hann-windowed sinc (polyphase) that is also the anti-alias filter when going
 * down. Scaled by `gain`; samples outside the source read as 0. Deterministic.
 */
export function resample(src: Int16Array, fromRate: number, from: number, toRate: number, frames: number, gain: number): Float32Array {
  const out = new Float32Array(frames);
  if (fromRate === toRate) {
    for (let i = 0; i < frames; i++) out[i] = (src[from + i] ?? 0) * gain;
    return out;
  }
  const { phases, half, taps } = tableFor(fromRate, toRate);
  const width = 2 * half;
  for (let i = 0; i < frames; i++) {
    const whole = Math.floor((i * fromRate) / toRate);
    const base = (i % phases) * width;
    const k0 = from + whole - half + 1;
    let acc = 0;
    if (k0 >= 0 && k0 + width <= src.length) {
      for (let q = 0; q < width; q++) acc += src[k0 + q]! * taps[base + q]!;
    } else {
      for (let q = 0; q < width; q++) {
        const k = k0 + q;
        if (k >= 0 && k < src.length) acc += src[k]! * taps[base + q]!;
      }
    }
    out[i] = acc * gain;
  }
  return out;
}
