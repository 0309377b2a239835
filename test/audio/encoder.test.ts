// The encoders behind every format: MP3 frames independent and at the asked rate and bitrate,
// chunks capped on frame boundaries, chunked output equal to whole, FLAC whole files complete.
import { describe, expect, it } from 'vitest';
import { encodeAudio, encodeAudioStream, synthesize, type AudioFormat, type SynthInput } from '../../src/audio/index.js';
import { mp3Frames as frames } from '../helpers/mp3.js';
import { tmpFile } from './helpers.js';
import { run } from '../helpers/tools.js';
import { ffprobe } from '../helpers/ffprobe.js';

const input = (over: Partial<SynthInput> = {}): SynthInput => ({
  text: 'Frames, caps and totals. 帧与总数。',
  voices: [{ id: 'female-yujie', weight: 1 }],
  sampleRate: 32000,
  channels: 1,
  ...over,
});

/** A PCM source that hands out blocks of awkward, varying sizes. */
async function* oddBlocks(pcm: Int16Array, channels: number) {
  const sizes = [1, 577, 4096, 33, 1152 * 3 + 7, 9000];
  for (let at = 0, k = 0; at < pcm.length; k++) {
    const n = Math.min(pcm.length - at, sizes[k % sizes.length]! * channels);
    yield pcm.subarray(at, at + n);
    at += n;
  }
}

describe('encoders', () => {
  it('MP3: every rate, both channel counts, several bitrates: ffprobe agrees, frames are independent', async () => {
    const cases: [number, 1 | 2, number][] = [
      [8000, 1, 32000],
      [11025, 2, 64000],
      [16000, 1, 64000],
      [16000, 2, 56000],
      [22050, 2, 32000],
      [24000, 1, 144000],
      [32000, 1, 128000],
      [32000, 2, 256000],
      [44100, 1, 32000],
      [44100, 2, 256000],
      [48000, 2, 128000],
      [48000, 1, 320000],
    ];
    for (const [sampleRate, channels, bitrate] of cases) {
      const r = await synthesize(input({ sampleRate, channels }));
      const { bytes, meta } = await encodeAudio('mp3', r, { sampleRate, channels, bitrate });
      const label = `${sampleRate} Hz ${channels} ch ${bitrate}`;
      expect(meta.bitrate, label).toBe(bitrate);
      for (const f of frames(bytes)) {
        expect(f.mainDataBegin, label).toBe(0); // no bit reservoir: each frame decodes alone
        expect([f.rate, f.kbps * 1000, f.channels], label).toEqual([sampleRate, bitrate, channels]);
      }
      const p = await ffprobe(tmpFile(bytes, 'mp3'));
      expect([p.sampleRate, p.channels, p.bitRate], label).toEqual([sampleRate, channels, bitrate]);
      expect(Math.abs(p.durationMs - meta.durationMs), label).toBeLessThanOrEqual(1);
      expect(meta.sizeBytes).toBe(bytes.length);
    }
  });

  it('MP3 chunks joined equal the one-shot file whatever the block sizes, and are deterministic', async () => {
    for (const [sampleRate, channels] of [
      [44100, 2],
      [16000, 1],
    ] as const) {
      const r = await synthesize(input({ sampleRate, channels }));
      const whole = await encodeAudio('mp3', r, { sampleRate, channels, bitrate: 64000 });
      const stream = encodeAudioStream('mp3', oddBlocks(r.pcm, channels), { sampleRate, channels, bitrate: 64000 });
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c);
      for (const c of chunks) frames(c);
      expect(Buffer.concat(chunks).equals(whole.bytes)).toBe(true);
      expect(await stream.meta()).toEqual(whole.meta);
      expect((await encodeAudio('mp3', r, { sampleRate, channels, bitrate: 64000 })).bytes.equals(whole.bytes)).toBe(true);
    }
  });

  it('maxChunkBytes caps every chunk on frame boundaries in each format; wholeFile is the one-shot file', async () => {
    const cap = 3000;
    for (const format of ['mp3', 'flac', 'wav', 'pcm'] as AudioFormat[]) {
      const channels = 2;
      const r = await synthesize(input({ sampleRate: 24000, channels }));
      const stream = encodeAudioStream(format, r, { sampleRate: 24000, channels, bitrate: 128000, maxChunkBytes: cap, keepWhole: true });
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c);
      const whole = await encodeAudio(format, r, { sampleRate: 24000, channels, bitrate: 128000 });
      expect(chunks.length, format).toBeGreaterThan(5);
      expect((await stream.wholeFile()).equals(whole.bytes), format).toBe(true);
      expect(Buffer.concat(chunks).length, format).toBe(whole.bytes.length);
      if (format === 'mp3') for (const c of chunks) expect(frames(c).length).toBeGreaterThan(0);
      if (format === 'pcm') for (const c of chunks) expect(c.length % (2 * channels)).toBe(0);
      if (format === 'wav') {
        expect((chunks[0]!.length - 44) % (2 * channels)).toBe(0);
        for (const c of chunks.slice(1)) expect(c.length % (2 * channels)).toBe(0);
      }
      if (format === 'flac') {
        // every chunk after the header starts on a frame sync (0xFFF8); a frame larger than the cap travels alone
        expect(chunks[0]!.subarray(0, 4).toString('latin1')).toBe('fLaC');
        for (const c of chunks.slice(1)) expect(c.readUInt16BE(0)).toBe(0xfff8);
      }
      for (const c of chunks) if (c.length > cap) expect(format === 'flac' && c.readUInt16BE(0) === 0xfff8, format).toBe(true);
      for (const c of chunks) if (format !== 'flac') expect(c.length, format).toBeLessThanOrEqual(cap);
    }
  });

  it('FLAC: the whole file of a stream passes flac -t with the true total samples and MD5', async () => {
    const r = await synthesize(input({ sampleRate: 16000, channels: 2 }));
    const stream = encodeAudioStream('flac', r, { sampleRate: 16000, channels: 2, maxChunkBytes: 2048, keepWhole: true });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c);
    const file = await stream.wholeFile();
    // STREAMINFO: total samples in the low 36 bits at byte 21..25, MD5 at 26..41
    const total = (file[21]! & 0x0f) * 2 ** 32 + file.readUInt32BE(22);
    expect(total).toBe(r.frames);
    expect(file.subarray(26, 42).equals(Buffer.alloc(16))).toBe(false);
    expect(Buffer.concat(chunks).subarray(26, 42).equals(Buffer.alloc(16))).toBe(true); // streamed: unknown
    await run('flac', ['-t', '-s', tmpFile(file, 'flac')]); // throws on a failed test or MD5 mismatch
  });
});
