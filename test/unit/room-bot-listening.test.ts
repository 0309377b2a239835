import { describe, expect, it } from 'vitest';
import { Downsampler, RECOGNITION_RATE, TRACK_RATE } from '../../src/services/platform/room/bot/downsample.js';
import { appendPcm, newUtterance } from '../../src/services/platform/shared/utterance.js';

/** A tone of `hz` at 48 kHz, `ms` long, amplitude 12,000. */
function tone(hz: number, ms: number): Int16Array {
  const n = Math.round((ms * TRACK_RATE) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / TRACK_RATE));
  return out;
}

function rms(x: Int16Array, from = 100): number {
  let s = 0;
  for (let i = from; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / (x.length - from));
}

function downsample(pcm: Int16Array, frame: number): Int16Array {
  const d = new Downsampler();
  const parts: Int16Array[] = [];
  for (let at = 0; at < pcm.length; at += frame) parts.push(d.push(pcm.subarray(at, at + frame)));
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

describe('room bot: the microphone brought to the recogniser', () => {
  it('48 kHz to 16 kHz: a third of the samples, the same whatever the framing', () => {
    const pcm = tone(1000, 200);
    const whole = downsample(pcm, 960);
    expect(whole.length).toBe((pcm.length * RECOGNITION_RATE) / TRACK_RATE);
    for (const frame of [1, 7, 333, 480, 4096]) expect(downsample(pcm, frame)).toEqual(whole);
  });

  it('speech frequencies pass, those above 8 kHz (which would fold back) are removed', () => {
    expect(rms(downsample(tone(1000, 500), 960)) / rms(tone(1000, 500))).toBeCloseTo(1, 1);
    expect(rms(downsample(tone(3000, 500), 960)) / rms(tone(3000, 500))).toBeGreaterThan(0.95);
    // 12 kHz would alias to 4 kHz at 16 kHz: at least 40 dB down.
    expect(rms(downsample(tone(12000, 500), 960)) / rms(tone(12000, 500))).toBeLessThan(0.01);
  });

  it('the utterance counts voiced 20 ms windows in a row (the barge-in measure), reset by a quiet one', () => {
    const u = newUtterance();
    const loud = downsample(tone(440, 100), 960);
    appendPcm(u, Buffer.from(loud.buffer));
    expect(u.voicedRun).toBe(1600);
    appendPcm(u, Buffer.alloc(640));
    expect(u.voicedRun).toBe(0);
    expect(u.heardVoice).toBe(true);
  });
});
