// The four sound effects, as stateful block processors (so a stream equals a whole render).
import type { SoundEffect } from './types.js';

export type Processor = (block: Float32Array) => void;

/** Extra audio after the last sound for the effect's tail, in seconds. */
export const EFFECT_TAIL_S: Record<SoundEffect, number> = {
  spacious_echo: 1.2,
  auditorium_echo: 1.5,
  lofi_telephone: 0,
  robotic: 0.05,
};

function delayLine(frames: number) {
  const buf = new Float32Array(Math.max(1, frames));
  let i = 0;
  return {
    read: () => buf[i]!,
    write: (v: number) => {
      buf[i] = v;
      i = (i + 1) % buf.length;
    },
  };
}

function biquad(type: 'lp' | 'hp', fc: number, sr: number, q = Math.SQRT1_2) {
  const w = (2 * Math.PI * Math.min(fc, 0.45 * sr)) / sr;
  const alpha = Math.sin(w) / (2 * q);
  const cos = Math.cos(w);
  const a0 = 1 + alpha;
  const b1 = (type === 'lp' ? 1 - cos : -(1 + cos)) / a0;
  const b0 = (type === 'lp' ? (1 - cos) / 2 : (1 + cos) / 2) / a0;
  const a1 = (-2 * cos) / a0;
  const a2 = (1 - alpha) / a0;
  let x1 = 0,
    x2 = 0,
    y1 = 0,
    y2 = 0;
  return (x: number) => {
    const y = b0 * x + b1 * x1 + b0 * x2 - a1 * y1 - a2 * y2;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    return y;
  };
}

/** A processor for the effect at a sample rate (mono float, in place). */
export function effectProcessor(effect: SoundEffect, sr: number): Processor {
  switch (effect) {
    case 'spacious_echo': {
      // Feedback echo: 220 ms, 45 % feedback.
      const d = delayLine(Math.round(0.22 * sr));
      return (b) => {
        for (let j = 0; j < b.length; j++) {
          const echo = d.read();
          d.write(b[j]! + 0.45 * echo);
          b[j] = 0.8 * b[j]! + 0.5 * echo;
        }
      };
    }
    case 'auditorium_echo': {
      // Schroeder reverb: four combs in parallel, two all-passes in series.
      const combs = [0.0297, 0.0371, 0.0411, 0.0437].map((s) => delayLine(Math.round(s * sr * 1.6)));
      const aps = [0.005, 0.0017].map((s) => delayLine(Math.round(s * sr)));
      return (b) => {
        for (let j = 0; j < b.length; j++) {
          const x = b[j]!;
          let wet = 0;
          for (const c of combs) {
            const y = c.read();
            c.write(x + 0.84 * y);
            wet += y;
          }
          wet *= 0.25;
          for (const a of aps) {
            const y = a.read();
            const v = wet + 0.7 * y;
            a.write(v);
            wet = y - 0.7 * v;
          }
          b[j] = 0.75 * x + 0.6 * wet;
        }
      };
    }
    case 'lofi_telephone': {
      // 300..3400 Hz band, light saturation, 6-bit quantisation.
      const f = [biquad('hp', 300, sr), biquad('hp', 300, sr), biquad('lp', 3400, sr), biquad('lp', 3400, sr)];
      return (b) => {
        for (let j = 0; j < b.length; j++) {
          let v = b[j]!;
          for (const g of f) v = g(v);
          v = Math.tanh(2.2 * v) / 1.6;
          b[j] = Math.round(v * 32) / 32;
        }
      };
    }
    case 'robotic': {
      // Ring modulation at 70 Hz plus a short metallic comb.
      const d = delayLine(Math.round(0.008 * sr));
      let n = 0;
      const w = (2 * Math.PI * 70) / sr;
      return (b) => {
        for (let j = 0; j < b.length; j++) {
          const ring = b[j]! * Math.sin(w * n++) * 1.4;
          const y = ring + 0.6 * d.read();
          d.write(y);
          b[j] = 0.7 * y;
        }
      };
    }
  }
}

/** Gain with a soft knee: linear below 0.7, smoothly approaching 1 above (never clips). */
export function softLimit(v: number): number {
  const a = Math.abs(v);
  if (a <= 0.7) return v;
  const y = 0.7 + 0.3 * Math.tanh((a - 0.7) / 0.3);
  return v < 0 ? -y : y;
}
