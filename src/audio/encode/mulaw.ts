// G.711 μ-law: one byte per sample, raw (`pcmu_raw`) or in a WAV container (`pcmu_wav`, format tag 7).

export type MulawContainer = 'raw' | 'wav';

const BIAS = 0x84;
const CLIP = 32635;

/** The μ-law byte of one signed 16-bit sample (ITU-T G.711, with the usual bias and inversion). */
export function mulawByte(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** The 58-byte header of a μ-law WAV (non-PCM formats carry `cbSize` and a `fact` chunk). */
export function mulawWavHeader(sampleRate: number, channels: number, frames: number): Buffer {
  const data = frames * channels;
  const h = Buffer.alloc(58);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(50 + data + (data & 1), 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(18, 16);
  h.writeUInt16LE(7, 20); // WAVE_FORMAT_MULAW
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels, 28);
  h.writeUInt16LE(channels, 32);
  h.writeUInt16LE(8, 34);
  h.writeUInt16LE(0, 36);
  h.write('fact', 38, 'ascii');
  h.writeUInt32LE(4, 42);
  h.writeUInt32LE(frames, 46);
  h.write('data', 50, 'ascii');
  h.writeUInt32LE(data, 54);
  return h;
}

export interface MulawStreamOptions {
  sampleRate: number;
  channels: 1 | 2;
  container: MulawContainer;
  /** Sample frames the source will produce: known up front, so the WAV header carries true sizes. */
  totalFrames: number;
  /** Chunks are cut to at most this many bytes, on sample frames (default 8192). */
  maxChunkBytes?: number;
}

/**
 * Streams μ-law chunks of whole sample frames as the PCM source advances; the WAV form starts with
 * its header in the first chunk (and a pad byte ends an odd data chunk). `size()` is the bytes so far.
 */
export function encodeMulawStream(source: AsyncIterable<Int16Array>, o: MulawStreamOptions): AsyncIterable<Buffer> & { size(): number } {
  const step = Math.max(o.channels, Math.floor((o.maxChunkBytes ?? 8192) / o.channels) * o.channels);
  let size = 0;
  async function* run(): AsyncGenerator<Buffer> {
    let header: Buffer | null = o.container === 'wav' ? mulawWavHeader(o.sampleRate, o.channels, o.totalFrames) : null;
    let data = 0;
    for await (const block of source) {
      const bytes = Buffer.allocUnsafe(block.length);
      for (let i = 0; i < block.length; i++) bytes[i] = mulawByte(block[i]!);
      data += bytes.length;
      for (let at = 0; at < bytes.length; at += step) {
        let out = bytes.subarray(at, at + step);
        if (header) {
          out = Buffer.concat([header, out]);
          header = null;
        }
        size += out.length;
        yield out;
      }
    }
    const tail: Buffer[] = [];
    if (header) tail.push(header);
    if (o.container === 'wav' && data & 1) tail.push(Buffer.alloc(1, 0xff));
    if (tail.length) {
      const out = Buffer.concat(tail);
      size += out.length;
      yield out;
    }
  }
  return { [Symbol.asyncIterator]: run, size: () => size };
}
