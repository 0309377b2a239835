// Ogg/Opus from the stream encoder: the packaging rule (E14), streamed equals whole, the signature kept.
import { describe, expect, it } from 'vitest';
import { encodeAudio, encodeAudioStream, readSignature, synthesize, type SynthInput } from '../../src/audio/index.js';
import { opusWriter } from '../../src/audio/encode/opus.js';
import { checkOpus, oggPages } from '../helpers/ogg.js';
import { ffmpegMono, tmpFile } from './helpers.js';

const input = (sampleRate: number, channels: 1 | 2): SynthInput => ({
  text: 'Is this ours? Yes, it is.',
  voices: [{ id: 'female-yujie', weight: 1 }],
  sampleRate,
  channels,
});

describe('Ogg/Opus encoder', () => {
  for (const rate of [8000, 12000, 16000, 24000, 48000])
    for (const channels of [1, 2] as const)
      it(`${rate} Hz, ${channels} channel(s): pages as E14 says, decodes to the exact length, CBR ${32 * channels} kbit/s`, async () => {
        const r = await synthesize(input(rate, channels));
        const { bytes, meta } = await encodeAudio('opus', r, { sampleRate: rate, channels, serial: 0xdeadbeef });
        expect(meta).toMatchObject({ format: 'opus', sampleRate: rate, channels, bitrate: 32000 * channels, sizeBytes: bytes.length });
        expect(meta.durationMs).toBe(Math.round((r.frames * 1000) / rate));
        const pages = await checkOpus(bytes, { channels, sampleRate: rate, audioLengthMs: meta.durationMs });
        expect(pages[0]!.serial).toBe(0xdeadbeef);
        // The last page's granule: pre-skip plus the input length at 48 kHz, exactly.
        expect(pages.at(-1)!.granule).toBe(BigInt(312 + (r.frames * 48000) / rate));
        // CBR: every 20 ms packet has the same size.
        const sizes = new Set(pages.slice(2).flatMap((p) => p.packets.map((x) => x.length)));
        expect([...sizes]).toEqual([(32000 * channels * 0.02) / 8]);
      });

  it('streamed: chunks end on pages, the first holds both headers and audio, the join equals the whole file', async () => {
    const r = await synthesize(input(24000, 2));
    const opts = { sampleRate: 24000, channels: 2 as const, serial: 7 };
    const whole = await encodeAudio('opus', r, opts);
    const stream = encodeAudioStream('opus', { pcm: r.pcm, sampleRate: 24000, channels: 2 }, { ...opts, maxChunkBytes: 3000, keepWhole: true });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(3);
    expect(Buffer.concat(chunks).equals(whole.bytes)).toBe(true);
    expect((await stream.wholeFile()).equals(whole.bytes)).toBe(true);
    expect(await stream.meta()).toEqual(whole.meta);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(3000);
      expect(oggPages(c).length).toBeGreaterThan(0); // pages end to end: the chunk starts and ends on a page boundary
    }
    expect(oggPages(chunks[0]!).length).toBeGreaterThanOrEqual(3);
    // Another serial, another stream: the same audio bytes under other page headers.
    const other = await encodeAudio('opus', r, { ...opts, serial: 8 });
    expect(other.bytes.equals(whole.bytes)).toBe(false);
    expect(other.bytes.length).toBe(whole.bytes.length);
  });

  it('keeps the signature at every rate (decoded by ffmpeg, resampled to 16 kHz)', async () => {
    for (const [rate, channels] of [
      [8000, 1],
      [12000, 2],
      [16000, 2],
      [24000, 1],
      [48000, 2],
    ] as const) {
      const r = await synthesize(input(rate, channels));
      const { bytes } = await encodeAudio('opus', r, { sampleRate: rate, channels, serial: 1 });
      expect(readSignature(await ffmpegMono(tmpFile(bytes, 'ogg'), ['-ar', '16000']), 16000), `${rate} Hz`).toBe(r.signatureId);
    }
  });
});

describe('Opus encoders living at once', () => {
  it('many encoders at once: each writes its own samples, so a stream gives the same bytes as alone', () => {
    const pcm = new Int16Array(48000 * 2);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin(i / 7));
    const alone = opusWriter({ sampleRate: 48000, channels: 2, serial: 1 });
    const aloneBytes = Buffer.concat([alone.header, ...alone.push(pcm), ...alone.end()]);

    const first = opusWriter({ sampleRate: 48000, channels: 2, serial: 1 });
    const out = [first.header, ...first.push(pcm.subarray(0, 9600))];
    const others = Array.from({ length: 150 }, (_, i) => opusWriter({ sampleRate: 48000, channels: 2, serial: i + 2 }));
    try {
      for (const w of others) w.push(pcm.subarray(0, 1920));
      out.push(...first.push(pcm.subarray(9600)), ...first.end());
      expect(Buffer.concat(out).equals(aloneBytes)).toBe(true);
    } finally {
      for (const w of others) w.close();
    }
  });
});

describe('Opus encoder missing', () => {
  it('says which package could not be loaded, and why (the speech service answers 2013 with it)', async () => {
    const { loadOpusLibrary } = await import('../../src/audio/encode/opus.js');
    const missing = loadOpusLibrary(() => {
      throw new Error("Cannot find module 'opusscript'");
    });
    expect(missing).toEqual({ ok: false, problem: "the Opus encoder (npm package opusscript) could not be loaded: Cannot find module 'opusscript'" });
    expect(loadOpusLibrary().ok).toBe(true);
  });
});
