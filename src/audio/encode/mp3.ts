// MP3 through @breezystack/lamejs (patched so the output sample rate is the requested one; see
// scripts/patch-lamejs.mjs, run at postinstall). CBR without bit reservoir, so every encodeBuffer result holds whole frames.
import { Mp3Encoder } from '@breezystack/lamejs';

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

/** Length in bytes and sample rate of the MPEG audio layer III frame header at `i`, or null. */
function frameAt(bytes: Uint8Array, i: number): { len: number; rate: number } | null {
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
  return { len, rate };
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
  push(pcm: Int16Array): Buffer;
  end(): Buffer;
}

export function mp3Writer(sampleRate: number, channels: 1 | 2, requestedBitrate: number): Mp3Writer {
  const bitrate = mp3Bitrate(sampleRate, requestedBitrate);
  const enc = new Mp3Encoder(channels, sampleRate, bitrate / 1000);
  let checked = false;
  const wrap = (out: Uint8Array): Buffer => {
    const b = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    if (!checked && b.length >= 4) {
      checked = true;
      const wrote = frameAt(b, 0)?.rate; // checks the lamejs patch is in place
      if (wrote !== sampleRate)
        throw new Error(`lamejs wrote ${wrote} Hz instead of ${sampleRate} Hz: lamejs is not patched (run node scripts/patch-lamejs.mjs, done by npm install)`);
    }
    return b; // lamejs returns a fresh Int8Array copy each call
  };
  return {
    bitrate,
    push(pcm) {
      if (channels === 1) return wrap(enc.encodeBuffer(pcm));
      const n = pcm.length / 2;
      const l = new Int16Array(n);
      const r = new Int16Array(n);
      for (let i = 0; i < n; i++) {
        l[i] = pcm[2 * i]!;
        r[i] = pcm[2 * i + 1]!;
      }
      return wrap(enc.encodeBuffer(l, r));
    },
    end: () => wrap(enc.flush()),
  };
}
