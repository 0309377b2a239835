/**
 * The pieces of input decoding that read bytes: the WAV layout, its sample codecs (PCM, float, G.711,
 * IMA ADPCM) and the split of native FLAC into frames. Decoding itself runs in slices (decode-slices.ts).
 */
import { crc16Update, crc8 } from './encode/flac.js';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  audioFormat: number;
  /** Bytes per block (IMA ADPCM) or per sample frame. */
  blockAlign: number;
  dataOffset: number;
  dataBytes: number;
  frames: number;
}

/** Walks the RIFF chunks. Tolerates streamed WAVs (sizes 0xFFFFFFFF) and truncated data. */
export function readWav(b: Buffer): WavInfo | null {
  let at = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes' | 'frames'> | null = null;
  while (at + 8 <= b.length) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= b.length) {
      let audioFormat = b.readUInt16LE(at + 8);
      if (audioFormat === 0xfffe && size >= 40) audioFormat = b.readUInt16LE(at + 32); // extensible
      fmt = {
        audioFormat,
        channels: b.readUInt16LE(at + 10),
        sampleRate: b.readUInt32LE(at + 12),
        blockAlign: b.readUInt16LE(at + 20),
        bitsPerSample: b.readUInt16LE(at + 22),
      };
    } else if (id === 'data') {
      if (!fmt || !fmt.channels || !fmt.sampleRate || !fmt.bitsPerSample) return null;
      const dataBytes = Math.min(size, b.length - at - 8);
      const w = { ...fmt, dataOffset: at + 8, dataBytes, frames: 0 };
      return { ...w, frames: wavFrames(w) };
    }
    if (size === 0xffffffff) return null;
    at += 8 + size + (size & 1);
  }
  return null;
}

/** Reader of one sample at a byte offset, as float in [-1, 1], for the plain PCM/float/G.711 layouts. */
export function sampleReader(b: Buffer, format: number, bits: number): ((at: number) => number) | null {
  if (format === 1 && bits === 8) return (at) => (b[at]! - 128) / 128;
  if (format === 1 && bits === 16) return (at) => b.readInt16LE(at) / 32768;
  if (format === 1 && bits === 24) return (at) => b.readIntLE(at, 3) / 8388608;
  if (format === 1 && bits === 32) return (at) => b.readInt32LE(at) / 2147483648;
  if (format === 3 && bits === 32) return (at) => b.readFloatLE(at);
  if (format === 3 && bits === 64) return (at) => b.readDoubleLE(at);
  if (format === 6 && bits === 8) return (at) => ALAW[b[at]!]!;
  if (format === 7 && bits === 8) return (at) => MULAW[b[at]!]!;
  return null;
}

/** G.711 A-law and mu-law, decoded once into tables of floats (ITU-T reference expansion). */
const ALAW = Float32Array.from({ length: 256 }, (_, v) => {
  const a = v ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  t = seg === 0 ? t + 8 : seg === 1 ? t + 0x108 : (t + 0x108) << (seg - 1);
  return (a & 0x80 ? t : -t) / 32768;
});
const MULAW = Float32Array.from({ length: 256 }, (_, v) => {
  const u = ~v & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return (u & 0x80 ? 0x84 - t : t - 0x84) / 32768;
});

/** Whether the WAV's codec and bit depth are ones the decoder reads (PCM, float, A/mu-law, IMA ADPCM). */
export function wavCodecReadable(w: WavInfo): boolean {
  const { audioFormat: f, bitsPerSample: bits } = w;
  return (
    (f === 1 && [8, 16, 24, 32].includes(bits)) ||
    (f === 3 && (bits === 32 || bits === 64)) ||
    ((f === 6 || f === 7) && bits === 8) ||
    (f === 17 && bits === 4 && w.blockAlign > 4 * w.channels)
  );
}

const IMA_INDEX = [-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8];
const IMA_STEP = [
  7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45, 50, 55, 60, 66, 73, 80, 88, 97, 107, 118, 130, 143, 157, 173, 190, 209, 230, 253,
  279, 307, 337, 371, 408, 449, 494, 544, 598, 658, 724, 796, 876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066, 2272, 2499, 2749, 3024, 3327, 3660,
  4026, 4428, 4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899, 15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
];

/** Sample frames in one IMA ADPCM block: the header sample, then two per data byte of each channel. */
export function imaFramesPerBlock(w: WavInfo): number {
  return 1 + ((w.blockAlign - 4 * w.channels) * 2) / w.channels;
}

/**
 * Decodes one IMA ADPCM block (Microsoft layout: a 4-byte header per channel, then 4-byte groups of
 * eight nibbles per channel in turn, low nibble first) and adds its channels' mean into `out` at `at`.
 * A plain loop over integers: a 50 MB file decodes in about a second.
 */
export function decodeImaBlock(block: Buffer, channels: number, out: Float32Array, at: number, frames: number): void {
  const per = 1 / (32768 * channels);
  for (let c = 0; c < channels; c++) {
    let pred = block.readInt16LE(c * 4);
    let index = Math.min(88, block[c * 4 + 2]!);
    if (at < out.length) out[at]! += pred * per;
    let n = 1;
    for (let g = 4 * channels + c * 4; g + 4 <= block.length && n < frames; g += 4 * channels) {
      for (let k = 0; k < 8 && n < frames; k++, n++) {
        const nib = (block[g + (k >> 1)]! >> ((k & 1) * 4)) & 15;
        const step = IMA_STEP[index]!;
        let diff = step >> 3;
        if (nib & 1) diff += step >> 2;
        if (nib & 2) diff += step >> 1;
        if (nib & 4) diff += step;
        pred = nib & 8 ? Math.max(-32768, pred - diff) : Math.min(32767, pred + diff);
        index = Math.min(88, Math.max(0, index + IMA_INDEX[nib]!));
        if (at + n < out.length) out[at + n]! += pred * per;
      }
    }
  }
}

/** Length of a FLAC frame header at `i` whose CRC-8 is valid, or 0. */
/** Sample frames the data chunk holds (whole IMA ADPCM blocks count in full, a cut last block in part). */
function wavFrames(w: WavInfo): number {
  if (w.audioFormat === 17 && w.blockAlign > 4 * w.channels) {
    const whole = Math.floor(w.dataBytes / w.blockAlign);
    const rest = w.dataBytes % w.blockAlign;
    const part = rest > 4 * w.channels ? 1 + Math.floor(((rest - 4 * w.channels) * 2) / w.channels) : 0;
    return whole * imaFramesPerBlock(w) + part;
  }
  return Math.floor(w.dataBytes / ((w.bitsPerSample / 8) * w.channels));
}

function flacHeaderAt(b: Uint8Array, i: number): number {
  if (i + 6 > b.length || b[i] !== 0xff || (b[i + 1]! & 0xfe) !== 0xf8) return 0;
  const bs = b[i + 2]! >> 4;
  const sr = b[i + 2]! & 15;
  if (bs === 0 || sr === 15 || b[i + 3]! & 1) return 0;
  const lead = b[i + 4]!;
  let utf = 1;
  if (lead >= 0xc0) for (let m = 0x40; lead & m && utf < 7; m >>= 1) utf++;
  let len = 4 + utf + (bs === 6 ? 1 : bs === 7 ? 2 : 0) + (sr === 12 ? 1 : sr === 13 || sr === 14 ? 2 : 0);
  if (i + len + 1 > b.length) return 0;
  return crc8(b, i, i + len) === b[i + len] ? ++len : 0;
}

/**
 * Splits native FLAC into frames: a boundary is a valid frame header where the running CRC-16
 * of the previous frame is zero. (codec-parser merges the last two frames when they are tiny,
 * e.g. CONSTANT silence frames, and the decoder then loses the last one.)
 */
export function splitFlacFrames(b: Uint8Array): Uint8Array[] {
  return [...flacFrames(b)];
}

/** The frames of native FLAC one by one (see splitFlacFrames), so a caller can stop or pause. */
export function* flacFrames(b: Uint8Array): Generator<Uint8Array> {
  let at = 4;
  for (let last = false; !last && at + 4 <= b.length;) {
    last = (b[at]! & 0x80) !== 0;
    at += 4 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
  }
  let start = at;
  while (start < b.length && flacHeaderAt(b, start)) {
    let end = b.length;
    let crc = 0;
    for (let i = start; i < b.length; i++) {
      if (i > start + 2 && crc === 0 && b[i] === 0xff && flacHeaderAt(b, i)) {
        end = i;
        break;
      }
      crc = crc16Update(crc, b[i]!);
    }
    yield b.subarray(start, end);
    start = end;
  }
}
