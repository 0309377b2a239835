// G.711 μ-law: one byte per sample, raw (`pcmu_raw`) or in a WAV container (`pcmu_wav`, format tag 7).
// Framing (chunks, the header in the first one, the pad byte) is the stream encoder's (./index.ts).

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

let table: Uint8Array | null = null;

/** The μ-law bytes of interleaved samples, one per sample (from a table of all 65,536 samples). */
export function mulawBytes(pcm: Int16Array): Buffer {
  if (!table) {
    table = new Uint8Array(65536);
    for (let s = -32768; s < 32768; s++) table[s & 0xffff] = mulawByte(s);
  }
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i]! & 0xffff]!;
  return out;
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
