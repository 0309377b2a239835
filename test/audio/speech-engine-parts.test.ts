// The speech engine's pure parts: which phones make which word, and the resampler.
import { describe, expect, it } from 'vitest';
import { alignWords, type Phone } from '../../src/audio/speech/align.js';
import { resample } from '../../src/audio/speech/samples.js';

const timed = (names: string[]): Phone[] => names.map((name, i) => ({ name, start: i * 0.1, end: (i + 1) * 0.1 }));

describe('alignWords', () => {
  it('lays each word over its phones, a changed phone ("the" before a vowel) included', () => {
    const times = alignWords(
      [
        ['dh', 'ax'],
        ['eh', 'n', 'd'],
      ],
      timed(['dh', 'iy', 'eh', 'n', 'd']),
    );
    expect(times.map((t) => [t.start, t.end].map((x) => Math.round(x * 10)))).toEqual([
      [0, 2],
      [2, 5],
    ]);
  });

  it('a word with no phones is an instant at the end of the word before; an extra phone joins the word before it', () => {
    const times = alignWords([['hh', 'ay'], [], ['y', 'uw']], timed(['hh', 'ay', 't', 'y', 'uw']));
    expect(times.map((t) => [t.start, t.end].map((x) => Math.round(x * 10)))).toEqual([
      [0, 3],
      [3, 3],
      [3, 5],
    ]);
  });

  it('without word phones the phones are shared alike, in order', () => {
    const times = alignWords([[], []], timed(['a', 'b', 'c', 'd']));
    expect(times.map((t) => [t.start, t.end].map((x) => Math.round(x * 10)))).toEqual([
      [0, 2],
      [2, 4],
    ]);
  });
});

describe('resample', () => {
  const sine = (hz: number, rate: number, n: number) => Int16Array.from({ length: n }, (_, i) => Math.round(16000 * Math.sin((2 * Math.PI * hz * i) / rate)));
  const crossings = (x: Float32Array) => x.slice(1).filter((v, i) => x[i]! < 0 !== v < 0).length;
  const peak = (x: Float32Array, from: number) => Math.max(...x.subarray(from, x.length - from).map(Math.abs));

  it('16 kHz to 48 kHz keeps a 1 kHz tone: its frequency and level', () => {
    const out = resample(sine(1000, 16000, 16000), 16000, 0, 48000, 48000, 1 / 16000);
    expect(out.length).toBe(48000);
    expect(Math.abs(crossings(out) - 2000)).toBeLessThanOrEqual(2);
    expect(peak(out, 100)).toBeCloseTo(1, 1);
  });

  it('16 kHz to 8 kHz filters what 8 kHz cannot hold (a 6 kHz tone), and keeps 1 kHz', () => {
    expect(peak(resample(sine(6000, 16000, 16000), 16000, 0, 8000, 8000, 1 / 16000), 100)).toBeLessThan(0.05);
    expect(peak(resample(sine(1000, 16000, 16000), 16000, 0, 8000, 8000, 1 / 16000), 100)).toBeCloseTo(1, 1);
  });

  it('starts at a source sample and is the same every time', () => {
    const src = sine(440, 16000, 4000);
    const a = resample(src, 16000, 800, 22050, 1000, 1);
    expect(a).toEqual(resample(src, 16000, 800, 22050, 1000, 1));
    expect(resample(src, 16000, 800, 16000, 10, 1)).toEqual(Float32Array.from(src.subarray(800, 810)));
  });
});
