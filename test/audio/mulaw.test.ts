import { describe, expect, it } from 'vitest';
import { encodeAudio, encodeAudioStream, mulawByte, readSignature, synthesize } from '../../src/audio/index.js';
import { checkMulaw } from '../helpers/ogg.js';
import { ffmpegMono, tmpFile } from './helpers.js';

/** The G.711 decoder's value of a μ-law byte (the standard expansion). */
function expand(byte: number): number {
  const u = ~byte & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

describe('G.711 μ-law encoder', () => {
  it('matches the standard code points and round-trips within the segment step', () => {
    expect(mulawByte(0)).toBe(0xff);
    expect(mulawByte(32767)).toBe(0x80);
    expect(mulawByte(-32768)).toBe(0x00);
    for (let s = -32768; s <= 32767; s += 97) {
      const back = expand(mulawByte(s));
      const step = Math.max(8, Math.abs(s) / 16);
      expect(Math.abs(back - Math.max(-32124, Math.min(32124, s))), `sample ${s}`).toBeLessThanOrEqual(step);
    }
  });

  it('a WAV stream carries true sizes up front and pads an odd data chunk', async () => {
    async function* blocks() {
      yield new Int16Array(5);
      yield new Int16Array(4);
    }
    const stream = encodeAudioStream('pcmu_wav', blocks(), { sampleRate: 8000, channels: 1, totalFrames: 9, maxChunkBytes: 4 });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c);
    const file = Buffer.concat(chunks);
    expect(file.length).toBe(58 + 9 + 1);
    expect((await stream.meta()).sizeBytes).toBe(file.length);
    expect(file.readUInt16LE(20)).toBe(7);
    expect(file.readUInt32LE(54)).toBe(9);
    expect(file.readUInt32LE(4)).toBe(file.length - 8);
    for (const c of chunks.slice(1)) expect(c.length).toBeLessThanOrEqual(4);
  });

  for (const channels of [1, 2] as const)
    it(`pcmu_raw and pcmu_wav, ${channels} channel(s): decodable, true sizes, streamed equals whole, the signature kept`, async () => {
      const r = await synthesize({ text: 'Is this ours? Yes.', voices: [{ id: 'female-yujie', weight: 1 }], sampleRate: 8000, channels });
      for (const kind of ['raw', 'wav'] as const) {
        const format = kind === 'raw' ? 'pcmu_raw' : 'pcmu_wav';
        const { bytes, meta } = await encodeAudio(format, r, { sampleRate: 8000, channels });
        expect(meta).toMatchObject({ format, sampleRate: 8000, channels, bitrate: 64000 * channels, sizeBytes: bytes.length });
        await checkMulaw(bytes, kind, channels, meta.durationMs);
        const stream = encodeAudioStream(
          format,
          { pcm: r.pcm, sampleRate: 8000, channels },
          { sampleRate: 8000, channels, totalFrames: r.frames, maxChunkBytes: 1000 },
        );
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(c);
        expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
        const inputArgs = kind === 'raw' ? ['-f', 'mulaw', '-ar', '8000', '-ac', String(channels)] : [];
        expect(readSignature(await ffmpegMono(tmpFile(bytes, kind), [], inputArgs), 8000)).toBe(r.signatureId);
      }
    });
});
