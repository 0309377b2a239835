// MP3: the one frame-header reader of the project, the legal bitrates, and the writer that turns
// encoder output into whole, independent CBR frames at the requested rate.
import { WASM_KBPS, wasmMp3Encoder, type RawMp3Encoder } from './lame-wasm.js';
import { loadLamejs } from '../lamejs.js';

const MPEG1 = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2 = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG25 = [8, 16, 24, 32, 40, 48, 56, 64];
export const MP3_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];

/** The CBR bitrate (bit/s) used for a requested one: the nearest legal one at that rate (ties: lower). */
export function mp3Bitrate(sampleRate: number, requested: number): number {
  if (!MP3_RATES.includes(sampleRate)) throw new RangeError(`MP3 cannot carry a sample rate of ${sampleRate} Hz`);
  const table = sampleRate >= 32000 ? MPEG1 : sampleRate >= 16000 ? MPEG2 : MPEG25;
  const kbps = requested / 1000;
  let best = table[0]!;
  for (const b of table) if (Math.abs(b - kbps) < Math.abs(best - kbps)) best = b;
  return best * 1000;
}

/** Samples per MP3 frame at a sample rate (MPEG-1 layer III: 1152, MPEG-2/2.5: 576). */
export function mp3FrameSamples(sampleRate: number): number {
  return sampleRate >= 32000 ? 1152 : 576;
}

export interface Mp3Frame {
  /** Frame length in bytes (header included). */
  len: number;
  rate: number;
  kbps: number;
  channels: 1 | 2;
  /** Where the frame's main data starts, counted back into earlier frames (0: self-contained). */
  mainDataBegin: number;
}

/** The MPEG audio layer III frame header at `i` (its side info too, when present), or null. */
export function frameAt(bytes: Uint8Array, i: number): Mp3Frame | null {
  if (i + 4 > bytes.length || bytes[i] !== 0xff || (bytes[i + 1]! & 0xe0) !== 0xe0) return null;
  const v = (bytes[i + 1]! >> 3) & 3; // 3: MPEG1, 2: MPEG2, 0: MPEG2.5
  const layer = (bytes[i + 1]! >> 1) & 3;
  const bi = bytes[i + 2]! >> 4;
  const si = (bytes[i + 2]! >> 2) & 3;
  if (v === 1 || layer !== 1 || bi === 0 || bi === 15 || si === 3) return null;
  const pad = (bytes[i + 2]! >> 1) & 1;
  const rate = (v === 3 ? [44100, 48000, 32000] : v === 2 ? [22050, 24000, 16000] : [11025, 12000, 8000])[si]!;
  const kbps = (v === 3 ? MPEG1 : MPEG2)[bi - 1]!;
  const len = Math.floor(((v === 3 ? 144000 : 72000) * kbps) / rate) + pad;
  const channels = bytes[i + 3]! >> 6 === 3 ? 1 : 2;
  const side = i + 4 + (bytes[i + 1]! & 1 ? 0 : 2); // a CRC word follows the header when protected
  const mainDataBegin = side + 1 >= bytes.length ? -1 : v === 3 ? (bytes[side]! << 1) | (bytes[side + 1]! >> 7) : bytes[side]!;
  return { len, rate, kbps, channels, mainDataBegin };
}

/** Counts the frames in whole-frame MP3 bytes, checking each sync word. */
export function countMp3Frames(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; n++) {
    const f = frameAt(bytes, i);
    if (!f) throw new Error(`MP3 chunk is not frame-aligned at byte ${i}`);
    i += f.len;
  }
  return n;
}

/**
 * Decoded duration of a CBR MP3 without a Xing/Info tag by walking its frames (what ffprobe
 * reports for such files), or null when the file is not a clean frame sequence.
 */
export function mp3FrameDuration(bytes: Uint8Array): { seconds: number; sampleRate: number } | null {
  let i = 0;
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33 && bytes.length > 10)
    i = 10 + ((bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!);
  const first = frameAt(bytes, i);
  if (!first) return null;
  const head = Buffer.from(bytes.subarray(i, i + Math.min(first.len, 64))).toString('latin1');
  if (head.includes('Xing') || head.includes('Info')) return null;
  let n = 0;
  while (i < bytes.length) {
    const f = frameAt(bytes, i);
    if (!f) {
      if (bytes.length - i === 128 && bytes[i] === 0x54) break; // ID3v1 "TAG"
      return null;
    }
    if (f.rate !== first.rate) return null;
    i += f.len;
    n++;
  }
  return { seconds: (n * mp3FrameSamples(first.rate)) / first.rate, sampleRate: first.rate };
}

export interface Mp3Writer {
  bitrate: number;
  /** Whole frames encoded so far (a frame split across encoder calls waits for its end). */
  push(pcm: Int16Array): Buffer;
  end(): Buffer;
}

/**
 * The MP3 encoder behind every stream: LAME in WebAssembly (lamejs for 56 and 144 kbit/s, which
 * that build does not take). Output is cut on frame headers so each piece is whole frames, and
 * every frame is checked to be independent (main_data_begin 0: no bit reservoir), so any run of
 * pieces decodes on its own and chunked output equals a one-shot encode.
 */
export async function mp3Writer(sampleRate: number, channels: 1 | 2, requestedBitrate: number): Promise<Mp3Writer> {
  const bitrate = mp3Bitrate(sampleRate, requestedBitrate);
  const kbps = bitrate / 1000;
  const raw = WASM_KBPS.includes(kbps) ? await wasmMp3Encoder(sampleRate, channels, kbps) : await lamejsEncoder(sampleRate, channels, kbps);
  let rest: Buffer = Buffer.alloc(0);
  const cut = (out: Uint8Array | Int8Array, last: boolean): Buffer => {
    // Always a copy: the encoder's output may be a view of its own memory. A frame's few hundred bytes
    // come from Buffer's shared pool instead of an array buffer of their own per frame.
    const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    const b = Buffer.concat([rest, bytes]);
    let i = 0;
    for (;;) {
      const f = frameAt(b, i);
      if (!f || i + f.len > b.length) break;
      if (f.rate !== sampleRate || f.kbps * 1000 !== bitrate)
        throw new Error(`MP3 encoder wrote ${f.rate} Hz ${f.kbps} kbit/s, not ${sampleRate} Hz ${kbps} kbit/s`);
      if (f.mainDataBegin !== 0) throw new Error('MP3 encoder wrote a frame that depends on the previous one (bit reservoir)');
      i += f.len;
    }
    if (i < b.length && (last || (b.length - i >= 4 && !frameAt(b, i)))) throw new Error(`MP3 encoder output is not frame-aligned at byte ${i}`);
    rest = Buffer.from(b.subarray(i));
    return b.subarray(0, i);
  };
  return { bitrate, push: (pcm) => cut(raw.encode(pcm), false), end: () => cut(raw.flush(), true) };
}

/**
 * @breezystack/lamejs, loaded with its output sample rate set to the requested one (audio/lamejs.ts:
 * the installed package is not changed). Loaded on the first request for 56 or 144 kbit/s: start-up
 * does not parse it.
 */
async function lamejsEncoder(sampleRate: number, channels: 1 | 2, kbps: number): Promise<RawMp3Encoder> {
  const { Mp3Encoder } = loadLamejs();
  const enc = new Mp3Encoder(channels, sampleRate, kbps);
  return {
    encode(pcm) {
      if (channels === 1) return enc.encodeBuffer(pcm);
      const n = pcm.length / 2;
      const l = new Int16Array(n);
      const r = new Int16Array(n);
      for (let i = 0; i < n; i++) {
        l[i] = pcm[2 * i]!;
        r[i] = pcm[2 * i + 1]!;
      }
      return enc.encodeBuffer(l, r);
    },
    flush: () => enc.flush(),
  };
}
