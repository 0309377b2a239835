// Voice, style and effects: each setting changes measurable properties, not just the gain.
import { describe, expect, it } from 'vitest';
import { synthesize, type SynthInput } from '../../src/audio/index.js';
import { centroidHz, dominantHz, spectralDistance } from './helpers.js';
import { rms, toFloat } from '../helpers/audio.js';

const SR = 16000;
const TEXT = 'Supercalifragilistic';
const input = (over: Partial<SynthInput> = {}): SynthInput => ({ text: TEXT, voices: [{ id: 'narrator', weight: 1 }], sampleRate: SR, channels: 1, ...over });

/** The speech part (after the signature lead-in) as float samples. */
async function speech(over: Partial<SynthInput> = {}): Promise<Float32Array> {
  const r = await synthesize(input(over));
  const start = Math.round((r.timeline.words[0]!.startMs * SR) / 1000);
  return toFloat(r.pcm).subarray(start);
}

describe('voice and style', () => {
  it('vol scales the amplitude without clipping', async () => {
    const a = await speech();
    const b = await speech({ vol: 2 });
    const loud = await speech({ vol: 10 });
    expect(rms(b) / rms(a)).toBeCloseTo(2, 1);
    expect(rms(loud)).toBeGreaterThan(rms(b));
    expect(Math.max(...loud.map(Math.abs))).toBeLessThan(1);
  });

  it('pitch +6 raises the dominant frequency and the centroid by about 2^(6/12)', async () => {
    const a = await speech();
    const b = await speech({ pitch: 6 });
    const ratio = 2 ** (6 / 12);
    expect(dominantHz(b, SR) / dominantHz(a, SR)).toBeCloseTo(ratio, 1);
    expect(Math.abs(dominantHz(b, SR) / dominantHz(a, SR) - ratio)).toBeLessThan(0.02);
    expect(centroidHz(b, SR) / centroidHz(a, SR)).toBeGreaterThan(1.3);
  });

  it('voices differ deterministically, and a mix sits closer to its heavier voice', async () => {
    const a = await speech({ voices: [{ id: 'male-deep', weight: 1 }] });
    const b = await speech({ voices: [{ id: 'female-bright', weight: 1 }] });
    expect(dominantHz(a, SR)).not.toBeCloseTo(dominantHz(b, SR), 0);
    expect(dominantHz(a, SR)).toBeGreaterThan(80);
    expect(dominantHz(b, SR)).toBeLessThan(300);
    const mix = await speech({
      voices: [
        { id: 'male-deep', weight: 3 },
        { id: 'female-bright', weight: 1 },
      ],
    });
    expect(spectralDistance(mix, a)).toBeLessThan(spectralDistance(mix, b));
    expect(dominantHz(mix, SR)).toBeCloseTo(dominantHz(a, SR), 0);
  });

  it('every emotion changes the spectrum, and they differ from one another', async () => {
    const neutral = await speech();
    const emotions = ['happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised', 'calm', 'fluent', 'whisper'];
    const outs = await Promise.all(emotions.map((emotion) => speech({ emotion })));
    outs.forEach((o, k) => expect(spectralDistance(o, neutral), emotions[k]).toBeGreaterThan(0.1));
    for (let i = 0; i < outs.length; i++)
      for (let j = i + 1; j < outs.length; j++) expect(spectralDistance(outs[i]!, outs[j]!), `${emotions[i]} vs ${emotions[j]}`).toBeGreaterThan(0.05);
    // whisper has no pitch: its energy sits far above a voice's fundamental
    expect(centroidHz(outs[8]!, SR)).toBeGreaterThan(2 * centroidHz(neutral, SR));
  });

  it('voice_modify pitch, intensity and timbre each change the signal', async () => {
    const neutral = await speech();
    expect(dominantHz(await speech({ voiceModify: { pitch: 100 } }), SR)).toBeGreaterThan(dominantHz(neutral, SR) * 1.2);
    expect(centroidHz(await speech({ voiceModify: { timbre: 100 } }), SR)).toBeGreaterThan(centroidHz(neutral, SR) * 1.2);
    expect(spectralDistance(await speech({ voiceModify: { timbre: -100 } }), neutral)).toBeGreaterThan(0.1);
    expect(spectralDistance(await speech({ voiceModify: { intensity: -100 } }), neutral)).toBeGreaterThan(0.1);
    expect(spectralDistance(await speech({ voiceModify: { intensity: 100 } }), neutral)).toBeGreaterThan(0.05);
  });

  it('the four sound effects each change the signal in their own way', async () => {
    const neutral = await speech();
    const fx = ['spacious_echo', 'auditorium_echo', 'lofi_telephone', 'robotic'] as const;
    const outs = await Promise.all(fx.map((soundEffect) => speech({ voiceModify: { soundEffect } })));
    outs.forEach((o, k) => expect(spectralDistance(o, neutral), fx[k]).toBeGreaterThan(0.1));
    // echoes leave sound after the words end; the telephone band removes the low fundamental
    expect(outs[0]!.length).toBeGreaterThan(neutral.length + SR);
    expect(rms(outs[0]!, neutral.length, neutral.length + SR / 2)).toBeGreaterThan(0.001);
    expect(rms(outs[1]!, neutral.length, neutral.length + SR / 2)).toBeGreaterThan(0.001);
    expect(dominantHz(outs[2]!, SR)).toBeGreaterThan(300);
    for (let i = 0; i < 4; i++) for (let j = i + 1; j < 4; j++) expect(spectralDistance(outs[i]!, outs[j]!)).toBeGreaterThan(0.05);
  });

  it('tags become short distinct non-tonal sounds', async () => {
    const tags = ['laughs', 'sighs', 'breath', 'coughs', 'gasps', 'clears throat'];
    const sounds: Float32Array[] = [];
    for (const t of tags) {
      const r = await synthesize(input({ text: `[${t}]`, tags: true }));
      const x = toFloat(r.pcm);
      const lead = Math.round(0.56 * SR);
      sounds.push(x.subarray(lead, lead + Math.round(0.2 * SR) + Math.round(0.3 * SR)));
      expect(rms(x, lead), t).toBeGreaterThan(0.005);
    }
    for (let i = 0; i < sounds.length; i++)
      for (let j = i + 1; j < sounds.length; j++) expect(spectralDistance(sounds[i]!, sounds[j]!), `${tags[i]} vs ${tags[j]}`).toBeGreaterThan(0.1);
  });

  it('the watermark appends a rhythm of at least half a second', async () => {
    const plain = await synthesize(input());
    const marked = await synthesize(input({ watermark: true }));
    expect(marked.durationMs - plain.durationMs).toBeGreaterThanOrEqual(500);
    const x = toFloat(marked.pcm);
    const tail = x.subarray(plain.frames);
    // on/off rhythm: 20 ms windows alternate between sound and silence several times
    const states: boolean[] = [];
    for (let at = 0; at + 320 <= tail.length; at += 320) states.push(rms(tail, at, at + 320) > 0.01);
    const flips = states.filter((s, i) => i > 0 && s !== states[i - 1]).length;
    expect(flips).toBeGreaterThanOrEqual(6);
  });
});
