// The signature survives what clients do to audio, and is never found in audio we did not make.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeToMono, encodeAudio, probeAudio, readSignature, synthesize, type SynthInput } from '../../src/audio/index.js';
import { ffmpegMono, tmpFile } from './helpers.js';
import { toFloat } from '../helpers/audio.js';
import { ffmpegPcm16 } from '../helpers/ffprobe.js';

const input = (over: Partial<SynthInput> = {}): SynthInput => ({
  text: 'Is this ours? Yes.',
  voices: [{ id: 'female-yujie', weight: 1 }],
  sampleRate: 44100,
  channels: 2,
  ...over,
});

function linearResample(x: Float32Array, from: number, to: number): Float32Array {
  const n = Math.floor((x.length * to) / from);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const p = (i * from) / to;
    const k = Math.floor(p);
    const f = p - k;
    out[i] = (x[k] ?? 0) * (1 - f) + (x[k + 1] ?? 0) * f;
  }
  return out;
}

describe('signature', () => {
  it('survives ffmpeg resampling, downmix, MP3 at 32 kbps, WAV/PCM conversion and linear resampling', async () => {
    const r = await synthesize(input());
    const id = r.signatureId;
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    const wav = tmpFile((await encodeAudio('wav', r, { sampleRate: 44100, channels: 2 })).bytes, 'wav');
    expect(readSignature(await ffmpegMono(wav, ['-ar', '16000']), 16000)).toBe(id); // resample + downmix
    expect(readSignature(await ffmpegMono(wav, ['-ar', '8000']), 8000)).toBe(id);
    expect(readSignature(linearResample(toFloat(r.pcm, 2), 44100, 16000), 16000)).toBe(id);
    const { run } = await import('../helpers/tools.js');
    const pcm16k = await ffmpegPcm16(wav);
    const asPcm = await decodeToMono(pcm16k, { rawPcm: { sampleRate: 16000, channels: 1 } });
    expect(readSignature(asPcm.samples, 16000)).toBe(id);
    // MP3 at 32 kbps, by our encoder and by ffmpeg's libmp3lame, decoded by ffmpeg
    const ours = await encodeAudio('mp3', r, { sampleRate: 44100, channels: 2, bitrate: 32000 });
    expect(readSignature(await ffmpegMono(tmpFile(ours.bytes, 'mp3')), 44100)).toBe(id);
    const theirs = tmpFile(Buffer.alloc(0), 'mp3');
    await run('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-ac', '1', '-ar', '16000', '-b:a', '32k', theirs]);
    expect(readSignature(await ffmpegMono(theirs), 16000)).toBe(id);
    // through our own decoders, from every format we write
    for (const format of ['mp3', 'flac', 'wav'] as const) {
      const bytes = format === 'mp3' ? ours.bytes : (await encodeAudio(format, r, { sampleRate: 44100, channels: 2 })).bytes;
      const d = await decodeToMono(bytes);
      expect(readSignature(d.samples, d.sampleRate), format).toBe(id);
    }
  });

  it('survives 8 kHz output and the telephone effect', async () => {
    const r8 = await synthesize(input({ sampleRate: 8000, channels: 1 }));
    expect(readSignature(toFloat(r8.pcm), 8000)).toBe(r8.signatureId);
    const tel = await synthesize(input({ sampleRate: 16000, channels: 1, voiceModify: { soundEffect: 'lofi_telephone' } }));
    const mp3 = await encodeAudio('mp3', tel, { sampleRate: 16000, channels: 1, bitrate: 32000 });
    const d = await decodeToMono(mp3.bytes);
    expect(readSignature(d.samples, d.sampleRate)).toBe(tel.signatureId);
  });

  it('is derived from the inputs: same request same id, any change another id', async () => {
    const a = await synthesize(input({ sampleRate: 16000, channels: 1 }));
    const b = await synthesize(input({ sampleRate: 16000, channels: 1 }));
    const c = await synthesize(input({ sampleRate: 16000, channels: 1, speed: 1.1 }));
    expect(a.signatureId).toBe(b.signatureId);
    expect(Buffer.from(a.pcm.buffer).equals(Buffer.from(b.pcm.buffer))).toBe(true);
    expect(c.signatureId).not.toBe(a.signatureId);
    expect(readSignature(toFloat(c.pcm), 16000)).toBe(c.signatureId);
  });

  it('is not found in a plain sine, noise, silence or foreign speech-like tones', async () => {
    const sr = 16000;
    const sine = new Float32Array(3 * sr).map((_, i) => 0.5 * Math.sin((2 * Math.PI * 1400 * i) / sr));
    let seed = 7;
    const noise = new Float32Array(3 * sr).map(() => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5) * 0.8);
    const chirp = new Float32Array(3 * sr).map((_, i) => 0.3 * Math.sin(2 * Math.PI * (1000 + (1500 * i) / (3 * sr)) * (i / sr)));
    // tones hopping among the signature's own frequencies, but without its preamble and CRC
    const hops = new Float32Array(3 * sr).map((_, i) => 0.3 * Math.sin((2 * Math.PI * (1000 + 100 * (Math.floor(i / 320) % 16)) * i) / sr));
    for (const x of [sine, noise, chirp, hops, new Float32Array(3 * sr)]) expect(readSignature(x, sr)).toBeNull();
  });

  it('is not found in speech-like noise bursts, chords, clicks or recorded reference audio', async () => {
    const sr = 16000;
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5;
    // 100 ms bursts of noise, 100 ms apart (syllable-like)
    const bursts = new Float32Array(3 * sr).map((_, i) => (Math.floor(i / 1600) % 2 ? 0 : 0.8 * rnd()));
    // a C major chord inside the signature's band, and a 20 ms arpeggio over its own tones
    const chord = new Float32Array(3 * sr).map((_, i) => [1046.5, 1318.5, 1568].reduce((a, f) => a + 0.2 * Math.sin((2 * Math.PI * f * i) / sr), 0));
    const notes = [1000, 1400, 1100, 2500, 1200, 1500, 1900];
    const arpeggio = new Float32Array(3 * sr).map((_, i) => 0.3 * Math.sin((2 * Math.PI * notes[Math.floor(i / 320) % notes.length]! * i) / sr));
    const clicks = new Float32Array(3 * sr).map((_, i) => (i % 160 === 0 ? 0.9 : 0));
    for (const x of [bursts, chord, arpeggio, clicks]) expect(readSignature(x, sr)).toBeNull();
    const ref = await decodeToMono(readFileSync(new URL('../../fixtures/remote/ref-5s.wav', import.meta.url)));
    expect(readSignature(ref.samples, ref.sampleRate)).toBeNull();
  });

  it('probe reports what a WAV/MP3/FLAC/PCM of ours is', async () => {
    const r = await synthesize(input({ sampleRate: 24000, channels: 1, text: 'Probe me.' }));
    for (const format of ['wav', 'mp3', 'flac', 'pcm'] as const) {
      const { bytes, meta } = await encodeAudio(format, r, { sampleRate: 24000, channels: 1, bitrate: 64000 });
      const p = await probeAudio(bytes, format === 'pcm' ? { rawPcm: { sampleRate: 24000, channels: 1 } } : {});
      expect(p).toEqual({ format, sampleRate: 24000, channels: 1, durationMs: meta.durationMs });
    }
  });
});
