/** FLAC, MP3 and ADTS AAC: durations from STREAMINFO, Xing/Info/VBRI headers or counts of frame headers. */
import { crc8 } from '../encode/flac.js';
import { ascii, checkShape, id3Length, isAdtsSync, isMp3Sync, undecodable, type ByteSource, type ContainerInfo } from './source.js';

/** Frame number or sample number of a FLAC frame header (its UTF-8-like coded number). */
function flacCodedNumber(b: Buffer, at: number): number {
  const lead = b[at]!;
  if (lead < 0x80) return lead;
  let n = 0;
  let extra = 0;
  for (let mask = 0x40; lead & mask; mask >>= 1) extra++;
  n = lead & (0x3f >> extra);
  for (let i = 1; i <= extra; i++) n = n * 64 + (b[at + i]! & 0x3f);
  return n;
}

const FLAC_BLOCK_SIZES = [0, 192, 576, 1152, 2304, 4608, 0, 0, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];

/** Samples up to the end of the FLAC frame whose (CRC-checked) header starts at `at` in `b`, or null. */
function flacFrameEnd(b: Buffer, at: number, fixedBlock: number): number | null {
  if (at + 6 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xfe) !== 0xf8) return null;
  const variable = (b[at + 1]! & 1) === 1;
  const bsCode = b[at + 2]! >> 4;
  const srCode = b[at + 2]! & 15;
  if (bsCode === 0 || srCode === 15) return null;
  const lead = b[at + 4]!;
  let utf = 1;
  if (lead >= 0xc0) for (let m = 0x40; lead & m && utf < 7; m >>= 1) utf++;
  let len = 4 + utf;
  let blockSize = FLAC_BLOCK_SIZES[bsCode]!;
  if (bsCode === 6) blockSize = (b[at + len] ?? 0) + 1;
  if (bsCode === 7) blockSize = (((b[at + len] ?? 0) << 8) | (b[at + len + 1] ?? 0)) + 1;
  len += bsCode === 6 ? 1 : bsCode === 7 ? 2 : 0;
  len += srCode === 12 ? 1 : srCode === 13 || srCode === 14 ? 2 : 0;
  if (at + len + 1 > b.length || crc8(b, at, at + len) !== b[at + len]) return null;
  const number = flacCodedNumber(b, at + 4);
  return variable ? number + blockSize : number * fixedBlock + blockSize;
}

export function readFlac(src: ByteSource): ContainerInfo {
  const s = src.bytes(4, 38);
  if (s.length < 38 || (s[0]! & 0x7f) !== 0) throw undecodable('FLAC file without a STREAMINFO block');
  const info = s.subarray(4);
  const minBlock = info.readUInt16BE(0);
  const sampleRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4);
  const channels = ((info[12]! >> 1) & 7) + 1;
  const total = (info[13]! & 0x0f) * 2 ** 32 + info.readUInt32BE(14);
  checkShape('FLAC STREAMINFO', sampleRate, channels);
  let samples = total;
  if (!samples) {
    // A streamed FLAC leaves the total at 0: the last frame header in the tail says where it ends.
    const tailStart = Math.max(42, src.size - 65536);
    const tail = src.bytes(tailStart, src.size - tailStart);
    for (let i = tail.length - 6; i >= 0 && !samples; i--) samples = flacFrameEnd(tail, i, minBlock) ?? 0;
    if (!samples) throw undecodable('FLAC stream without a readable frame');
  }
  return { container: 'flac', codec: 'flac', duration: samples / sampleRate, sampleRate, channels };
}

const MP3_BITRATES = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0],
};
const MP3_RATES = [44100, 48000, 32000];

interface Mp3Frame {
  length: number;
  sampleRate: number;
  samples: number;
  channels: number;
  mpeg1: boolean;
}

/** The layer III frame header at `at`, or null. */
export function mp3FrameAt(b: Buffer, at: number): Mp3Frame | null {
  if (!isMp3Sync(b, at) || at + 4 > b.length) return null;
  const version = (b[at + 1]! >> 3) & 3; // 0 = 2.5, 2 = 2, 3 = 1
  if (version === 1) return null;
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const mpeg1 = version === 3;
  const sampleRate = MP3_RATES[rateIndex]! / (mpeg1 ? 1 : version === 2 ? 2 : 4);
  const kbps = (mpeg1 ? MP3_BITRATES.v1 : MP3_BITRATES.v2)[bitrateIndex]!;
  const samples = mpeg1 ? 1152 : 576;
  const padding = (b[at + 2]! >> 1) & 1;
  const length = Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + padding;
  return { length, sampleRate, samples, channels: b[at + 3]! >> 6 === 3 ? 1 : 2, mpeg1 };
}

export function readMp3(src: ByteSource): ContainerInfo {
  let at = id3Length(src);
  // Padding between the tag and the first frame is allowed: the first frame is one followed by another
  // frame (or by the end of the file), so a stray sync pattern is not taken for audio.
  const window = src.bytes(at, 4096);
  let first: Mp3Frame | null = null;
  for (let skip = 0; skip + 4 <= window.length && !first; skip++) {
    const f = mp3FrameAt(window, skip);
    const next = f ? at + skip + f.length : 0;
    if (f && (next + 4 > src.size || mp3FrameAt(src.bytes(next, 4), 0))) {
      first = f;
      at += skip;
    }
  }
  if (!first) throw undecodable('MP3 file without a readable MPEG audio frame');
  const head = src.bytes(at, first.length);
  const side = first.mpeg1 ? (first.channels === 1 ? 17 : 32) : first.channels === 1 ? 9 : 17;
  const tagAt = 4 + side;
  if (ascii(head, tagAt, 'Xing') || ascii(head, tagAt, 'Info')) {
    const flags = head.length >= tagAt + 12 ? head.readUInt32BE(tagAt + 4) : 0;
    if (flags & 1) {
      const frames = head.readUInt32BE(tagAt + 8);
      return { container: 'mp3', codec: 'mp3', duration: (frames * first.samples) / first.sampleRate, sampleRate: first.sampleRate, channels: first.channels };
    }
  }
  if (ascii(head, 36, 'VBRI') && head.length >= 36 + 18) {
    const frames = head.readUInt32BE(36 + 14);
    return { container: 'mp3', codec: 'mp3', duration: (frames * first.samples) / first.sampleRate, sampleRate: first.sampleRate, channels: first.channels };
  }
  // No header with a count: count the frames, reading only their headers.
  let frames = 0;
  while (at + 4 <= src.size) {
    const f = mp3FrameAt(src.bytes(at, 4), 0);
    if (!f) break; // an ID3v1 tag, an APE tag or trailing junk ends the audio
    frames++;
    at += f.length;
  }
  return { container: 'mp3', codec: 'mp3', duration: (frames * first.samples) / first.sampleRate, sampleRate: first.sampleRate, channels: first.channels };
}

const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

export function readAdts(src: ByteSource): ContainerInfo {
  let at = id3Length(src);
  let samples = 0;
  let sampleRate = 0;
  let channels = 0;
  while (at + 7 <= src.size) {
    const h = src.bytes(at, 7);
    if (!isAdtsSync(h)) break;
    const rateIndex = (h[2]! >> 2) & 15;
    const rate = ADTS_RATES[rateIndex];
    const length = ((h[3]! & 3) << 11) | (h[4]! << 3) | (h[5]! >> 5);
    if (!rate || length < 7) break;
    if (!sampleRate) {
      sampleRate = rate;
      channels = ((h[2]! & 1) << 2) | (h[3]! >> 6) || 2;
    }
    samples += ((h[6]! & 3) + 1) * 1024;
    at += length;
  }
  if (!sampleRate) throw undecodable('AAC stream without a readable ADTS frame');
  return { container: 'aac', codec: 'aac', duration: samples / sampleRate, sampleRate, channels };
}
