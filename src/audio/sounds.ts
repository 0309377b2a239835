// Non-tonal sounds for tags ([laughs], [sighs], ...) and the AIGC watermark rhythm.
import { hashString } from './plan.js';
import type { TagName } from './text/tokens.js';
import { envelope, noiseSource, VOICE_LEVEL } from './voice.js';

interface TagShape {
  /** Pulses as [start, length] in fractions of the tag's duration. */
  pulses: [number, number][];
  /** Band-pass centre at the start and at the end (Hz), and its Q. */
  fromHz: number;
  toHz: number;
  q: number;
  level: number;
}

const TAGS: Record<TagName, TagShape> = {
  laughs: {
    pulses: [
      [0, 0.12],
      [0.2, 0.12],
      [0.4, 0.12],
      [0.6, 0.12],
      [0.8, 0.14],
    ],
    fromHz: 1400,
    toHz: 1100,
    q: 2.5,
    level: 0.9,
  },
  chuckles: {
    pulses: [
      [0, 0.2],
      [0.33, 0.2],
      [0.66, 0.25],
    ],
    fromHz: 900,
    toHz: 800,
    q: 3,
    level: 0.6,
  },
  gasps: { pulses: [[0, 1]], fromHz: 1800, toHz: 2600, q: 1.5, level: 0.8 },
  sighs: { pulses: [[0, 1]], fromHz: 1200, toHz: 400, q: 1.2, level: 0.5 },
  inhales: { pulses: [[0, 1]], fromHz: 1500, toHz: 2000, q: 1, level: 0.35 },
  breath: { pulses: [[0, 1]], fromHz: 1000, toHz: 1000, q: 0.8, level: 0.3 },
  exhale: { pulses: [[0, 1]], fromHz: 900, toHz: 500, q: 0.9, level: 0.4 },
  coughs: {
    pulses: [
      [0, 0.3],
      [0.5, 0.35],
    ],
    fromHz: 600,
    toHz: 350,
    q: 1.5,
    level: 1,
  },
  'clears throat': {
    pulses: [
      [0, 0.35],
      [0.45, 0.55],
    ],
    fromHz: 300,
    toHz: 250,
    q: 2,
    level: 0.8,
  },
  sniffles: {
    pulses: [
      [0, 0.35],
      [0.55, 0.4],
    ],
    fromHz: 2800,
    toHz: 3200,
    q: 2,
    level: 0.45,
  },
  snorts: { pulses: [[0, 1]], fromHz: 250, toHz: 200, q: 3, level: 0.9 },
  hisses: { pulses: [[0, 1]], fromHz: 3400, toHz: 3400, q: 2, level: 0.45 },
  tsks: {
    pulses: [
      [0, 0.25],
      [0.6, 0.25],
    ],
    fromHz: 3000,
    toHz: 3000,
    q: 1,
    level: 0.7,
  },
  groans: { pulses: [[0, 1]], fromHz: 320, toHz: 220, q: 4, level: 0.7 },
};

/** A tag's sound: deterministic band-passed noise pulses (no pitch). */
export function renderTag(name: TagName, frames: number, sampleRate: number): Float32Array {
  const shape = TAGS[name];
  const out = new Float32Array(frames);
  const rnd = noiseSource(hashString(name));
  const nyq = 0.45 * sampleRate;
  // State-variable band-pass filter with a swept centre frequency.
  let low = 0;
  let band = 0;
  const filtered = new Float32Array(frames);
  let peak = 1e-9;
  for (let j = 0; j < frames; j++) {
    const fc = Math.min(nyq, shape.fromHz + ((shape.toHz - shape.fromHz) * j) / frames);
    const f = 2 * Math.sin((Math.PI * fc) / sampleRate / 2);
    const high = rnd() - low - band / shape.q;
    band += f * high;
    low += f * band;
    filtered[j] = band;
    peak = Math.max(peak, Math.abs(band));
  }
  for (const [s, l] of shape.pulses) {
    const a = Math.floor(s * frames);
    const n = Math.min(frames - a, Math.max(2, Math.floor(l * frames)));
    const ramp = Math.max(1, Math.floor(n / 4));
    for (let j = 0; j < n; j++) out[a + j] = (filtered[a + j]! / peak) * VOICE_LEVEL * shape.level * envelope(j, n, ramp, ramp);
  }
  return out;
}

const WM_PATTERN = [1, 1, 0, 1, 0, 1, 1, 1];
const WM_STEP_S = 0.08;
/** Duration of the watermark rhythm (after a 100 ms gap), in seconds. */
export const WATERMARK_S = 0.1 + WM_PATTERN.length * WM_STEP_S;

/** The AIGC watermark: a 0.74 s rhythm of short two-tone pips (880 + 2640 Hz) on an 80 ms grid. */
export function renderWatermark(sampleRate: number): Float32Array {
  const out = new Float32Array(Math.round(WATERMARK_S * sampleRate));
  const gap = Math.round(0.1 * sampleRate);
  const step = Math.round(WM_STEP_S * sampleRate);
  const pip = Math.round(0.05 * sampleRate);
  const ramp = Math.round(0.005 * sampleRate);
  WM_PATTERN.forEach((on, i) => {
    if (!on) return;
    const a = gap + i * step;
    for (let j = 0; j < pip; j++) {
      const t = j / sampleRate;
      const v = 0.6 * Math.sin(2 * Math.PI * 880 * t) + 0.4 * Math.sin(2 * Math.PI * 2640 * t);
      out[a + j] = 0.25 * v * envelope(j, pip, ramp, ramp);
    }
  });
  return out;
}
