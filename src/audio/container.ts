/**
 * Containers of uploaded audio, recognised from the bytes alone, and their duration read from the
 * container's own metadata or frame headers (never by decoding the audio): WAV/RF64 data size, AIFF
 * `COMM`, FLAC `STREAMINFO`, MP3 Xing/Info/VBRI or a frame count, AAC ADTS frames, MP4 `mdhd`, the
 * last Ogg granule less the Opus pre-skip. Reads go through a ByteSource, so a 50 MB file on disk is
 * touched only where its headers are.
 */
import { crc8 } from './encode/flac.js';

export type Container = 'wav' | 'aiff' | 'flac' | 'mp3' | 'aac' | 'm4a' | 'ogg';

/** Random access to bytes; `bytes` may return fewer than asked at the end. */
export interface ByteSource {
  readonly size: number;
  bytes(offset: number, length: number): Buffer;
}

export function bufferSource(b: Buffer): ByteSource {
  return { size: b.length, bytes: (offset, length) => b.subarray(Math.max(0, offset), Math.max(0, Math.min(b.length, offset + length))) };
}

export interface ContainerInfo {
  container: Container;
  /** Codec inside the container (`pcm`, `mp3`, `aac`, `alac`, `opus`, `vorbis`, `flac`, …). */
  codec: string;
  /** Seconds, from the container's metadata or its frame headers. */
  duration: number;
  sampleRate: number;
  channels: number;
}

/** Why bytes are refused: not a listed container at all, or a listed one that cannot be read. */
export class ContainerError extends Error {
  constructor(
    readonly kind: 'unsupported' | 'undecodable',
    message: string,
  ) {
    super(message);
    this.name = 'ContainerError';
  }
}

const undecodable = (what: string) => new ContainerError('undecodable', what);
const ascii = (b: Buffer, at: number, s: string) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

/** Length of an ID3v2 tag at the start (0 when none). */
function id3Length(src: ByteSource): number {
  const h = src.bytes(0, 10);
  if (!ascii(h, 0, 'ID3') || h.length < 10) return 0;
  const size = ((h[6]! & 0x7f) << 21) | ((h[7]! & 0x7f) << 14) | ((h[8]! & 0x7f) << 7) | (h[9]! & 0x7f);
  return 10 + size + (h[5]! & 0x10 ? 10 : 0);
}

const isAdtsSync = (b: Buffer, at = 0) => b.length >= at + 2 && b[at] === 0xff && (b[at + 1]! & 0xf6) === 0xf0;
const isMp3Sync = (b: Buffer, at = 0) => b.length >= at + 2 && b[at] === 0xff && (b[at + 1]! & 0xe0) === 0xe0 && ((b[at + 1]! >> 1) & 3) === 1;

/** The container of the bytes, by magic numbers only; null when it is none of the listed ones. */
export function sniffContainer(src: ByteSource): Container | null {
  const h = src.bytes(0, 16);
  if ((ascii(h, 0, 'RIFF') || ascii(h, 0, 'RF64')) && ascii(h, 8, 'WAVE')) return 'wav';
  if (ascii(h, 0, 'FORM') && (ascii(h, 8, 'AIFF') || ascii(h, 8, 'AIFC'))) return 'aiff';
  if (ascii(h, 0, 'fLaC')) return 'flac';
  if (ascii(h, 4, 'ftyp')) return 'm4a';
  if (ascii(h, 0, 'OggS')) return 'ogg';
  const tag = id3Length(src);
  const at = tag ? src.bytes(tag, 4) : h;
  if (isAdtsSync(at)) return 'aac';
  if (isMp3Sync(at)) return 'mp3';
  // An ID3 tag announces MPEG audio even when padding precedes the first frame.
  return tag ? 'mp3' : null;
}

/** Container, codec, duration, rate and channels; throws ContainerError. */
export function readContainer(src: ByteSource): ContainerInfo {
  if (!src.size) throw new ContainerError('unsupported', 'the file is empty');
  const container = sniffContainer(src);
  switch (container) {
    case 'wav':
      return readWavInfo(src);
    case 'aiff':
      return readAiff(src);
    case 'flac':
      return readFlac(src);
    case 'mp3':
      return readMp3(src);
    case 'aac':
      return readAdts(src);
    case 'm4a':
      return readMp4(src);
    case 'ogg':
      return readOgg(src);
    default:
      throw new ContainerError('unsupported', 'unrecognised audio format');
  }
}

/** Where a WAV's samples are and how they are laid out (PCM reading uses it too). */
export interface WavLayout {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  dataOffset: number;
  dataBytes: number;
  /** Sample frames stated by a `fact` chunk (compressed codecs), when present. */
  fact?: number;
}

export function wavLayout(src: ByteSource): WavLayout {
  const rf64 = ascii(src.bytes(0, 4), 0, 'RF64');
  let ds64Data: number | null = null;
  let fmt: Omit<WavLayout, 'dataOffset' | 'dataBytes' | 'fact'> | null = null;
  let fact: number | null = null;
  for (let at = 12; at + 8 <= src.size;) {
    const h = src.bytes(at, 8);
    const id = h.toString('latin1', 0, 4);
    const size = h.readUInt32LE(4);
    if (id === 'ds64') {
      const d = src.bytes(at + 8, 16);
      if (d.length === 16) ds64Data = Number(d.readBigUInt64LE(8));
    } else if (id === 'fmt ') {
      const f = src.bytes(at + 8, Math.min(size, 40));
      if (f.length < 16) throw undecodable('broken WAV fmt chunk');
      let audioFormat = f.readUInt16LE(0);
      if (audioFormat === 0xfffe && f.length >= 26) audioFormat = f.readUInt16LE(24);
      fmt = {
        audioFormat,
        channels: f.readUInt16LE(2),
        sampleRate: f.readUInt32LE(4),
        byteRate: f.readUInt32LE(8),
        blockAlign: f.readUInt16LE(12),
        bitsPerSample: f.readUInt16LE(14),
      };
    } else if (id === 'fact' && size >= 4) {
      fact = src.bytes(at + 8, 4).readUInt32LE(0);
    } else if (id === 'data') {
      if (!fmt) throw undecodable('WAV data chunk before its fmt chunk');
      const declared = rf64 && size === 0xffffffff && ds64Data !== null ? ds64Data : size;
      const dataBytes = Math.min(declared, src.size - at - 8);
      return { ...fmt, dataOffset: at + 8, dataBytes, ...(fact !== null ? { fact } : {}) };
    }
    if (size === 0xffffffff) break;
    at += 8 + size + (size & 1);
  }
  throw undecodable('WAV file without a data chunk');
}

function readWavInfo(src: ByteSource): ContainerInfo {
  const w = wavLayout(src);
  checkShape('WAV', w.sampleRate, w.channels);
  const plain = w.audioFormat === 1 || w.audioFormat === 3 || w.audioFormat === 6 || w.audioFormat === 7;
  let duration: number;
  // Plain sample codecs: whole frames of the data chunk; compressed ones state their count in `fact`.
  if (plain && w.blockAlign) duration = Math.floor(w.dataBytes / w.blockAlign) / w.sampleRate;
  else if (w.fact !== undefined) duration = w.fact / w.sampleRate;
  else if (w.byteRate) duration = w.dataBytes / w.byteRate;
  else throw undecodable('WAV header states no byte rate');
  const codec =
    w.audioFormat === 1 ? 'pcm' : w.audioFormat === 3 ? 'pcm_float' : w.audioFormat === 6 ? 'alaw' : w.audioFormat === 7 ? 'mulaw' : `wav-${w.audioFormat}`;
  return { container: 'wav', codec, duration, sampleRate: w.sampleRate, channels: w.channels };
}

function checkShape(what: string, sampleRate: number, channels: number): void {
  if (!(sampleRate >= 1000 && sampleRate <= 768000) || !(channels >= 1 && channels <= 64))
    throw undecodable(`${what} header declares ${channels} channels at ${sampleRate} Hz`);
}

/** An IEEE 754 80-bit extended float (AIFF's sample rate). */
export function extended80(b: Buffer, at: number): number {
  const exp = b.readUInt16BE(at) & 0x7fff;
  const hi = b.readUInt32BE(at + 2);
  const lo = b.readUInt32BE(at + 6);
  if (exp === 0 && hi === 0 && lo === 0) return 0;
  return (hi * 2 ** 32 + lo) * 2 ** (exp - 16383 - 63);
}

/** Where an AIFF's samples are and how they are laid out. */
export interface AiffLayout {
  channels: number;
  frames: number;
  bitsPerSample: number;
  sampleRate: number;
  compression: string;
  dataOffset: number;
}

export function aiffLayout(src: ByteSource): AiffLayout {
  const aifc = ascii(src.bytes(8, 4), 0, 'AIFC');
  let comm: Omit<AiffLayout, 'dataOffset'> | null = null;
  let dataOffset = -1;
  for (let at = 12; at + 8 <= src.size;) {
    const h = src.bytes(at, 8);
    const id = h.toString('latin1', 0, 4);
    const size = h.readUInt32BE(4);
    if (id === 'COMM') {
      const c = src.bytes(at + 8, Math.min(size, 64));
      if (c.length < 18) throw undecodable('broken AIFF COMM chunk');
      const compression = aifc && c.length >= 22 ? c.toString('latin1', 18, 22) : 'NONE';
      comm = { channels: c.readUInt16BE(0), frames: c.readUInt32BE(2), bitsPerSample: c.readUInt16BE(6), sampleRate: extended80(c, 8), compression };
    } else if (id === 'SSND') {
      const s = src.bytes(at + 8, 8);
      if (s.length < 8) throw undecodable('broken AIFF SSND chunk');
      dataOffset = at + 16 + s.readUInt32BE(0);
    }
    at += 8 + size + (size & 1);
  }
  if (!comm) throw undecodable('AIFF file without a COMM chunk');
  return { ...comm, dataOffset };
}

function readAiff(src: ByteSource): ContainerInfo {
  const a = aiffLayout(src);
  checkShape('AIFF', Math.round(a.sampleRate), a.channels);
  const codec = a.compression === 'NONE' || a.compression === 'twos' ? 'pcm' : a.compression.trim().toLowerCase();
  return { container: 'aiff', codec, duration: a.frames / a.sampleRate, sampleRate: Math.round(a.sampleRate), channels: a.channels };
}

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

function readFlac(src: ByteSource): ContainerInfo {
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

function readMp3(src: ByteSource): ContainerInfo {
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

function readAdts(src: ByteSource): ContainerInfo {
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

interface Box {
  type: string;
  start: number;
  body: number;
  end: number;
}

/** The boxes between `from` and `to` (MP4 / ISO BMFF). */
function boxes(src: ByteSource, from: number, to: number): Box[] {
  const out: Box[] = [];
  for (let at = from; at + 8 <= to;) {
    const h = src.bytes(at, 16);
    let size = h.readUInt32BE(0);
    let body = at + 8;
    if (size === 1) {
      if (h.length < 16) break;
      size = Number(h.readBigUInt64BE(8));
      body = at + 16;
    } else if (size === 0) size = to - at;
    if (size < 8) break;
    out.push({ type: h.toString('latin1', 4, 8), start: at, body, end: Math.min(to, at + size) });
    at += size;
  }
  return out;
}

const child = (src: ByteSource, box: Box | undefined, type: string, skip = 0) =>
  box ? boxes(src, box.body + skip, box.end).find((b) => b.type === type) : undefined;

function readMp4(src: ByteSource): ContainerInfo {
  const moov = boxes(src, 0, src.size).find((b) => b.type === 'moov');
  if (!moov) throw undecodable('MP4 file without a moov box');
  for (const trak of boxes(src, moov.body, moov.end).filter((b) => b.type === 'trak')) {
    const mdia = child(src, trak, 'mdia');
    const hdlr = child(src, mdia, 'hdlr');
    if (!hdlr || src.bytes(hdlr.body + 8, 4).toString('latin1') !== 'soun') continue;
    const mdhd = child(src, mdia, 'mdhd');
    const stsd = child(src, child(src, child(src, mdia, 'minf'), 'stbl'), 'stsd');
    if (!mdhd || !stsd) throw undecodable('MP4 audio track without mdhd or stsd');
    const entry = boxes(src, stsd.body + 8, stsd.end)[0];
    const codec = entry?.type === 'mp4a' ? 'aac' : entry?.type === 'alac' ? 'alac' : null;
    if (!codec) throw new ContainerError('unsupported', `MP4 audio codec ${JSON.stringify(entry?.type ?? '')} is not AAC or ALAC`);
    const m = src.bytes(mdhd.body, 32);
    const v1 = m[0] === 1;
    const timescale = v1 ? m.readUInt32BE(20) : m.readUInt32BE(12);
    const units = v1 ? Number(m.readBigUInt64BE(24)) : m.readUInt32BE(16);
    if (!timescale) throw undecodable('MP4 mdhd with a zero timescale');
    const e = src.bytes(entry!.body, 28);
    const channels = e.length >= 28 ? e.readUInt16BE(16) : 0;
    const sampleRate = e.length >= 28 ? e.readUInt16BE(24) : timescale;
    return { container: 'm4a', codec, duration: units / timescale, sampleRate: sampleRate || timescale, channels: channels || 1 };
  }
  throw new ContainerError('unsupported', 'MP4 file without an audio track');
}

function readOgg(src: ByteSource): ContainerInfo {
  const page = src.bytes(0, 27 + 255 + 64);
  if (page.length < 28) throw undecodable('truncated Ogg page');
  const segments = page[26]!;
  const packet = page.subarray(27 + segments);
  let codec: 'opus' | 'vorbis';
  let sampleRate: number;
  let channels: number;
  let preSkip = 0;
  if (ascii(packet, 0, 'OpusHead') && packet.length >= 19) {
    codec = 'opus';
    channels = packet[9]!;
    preSkip = packet.readUInt16LE(10);
    sampleRate = 48000; // Opus granules always count 48 kHz samples
  } else if (packet[0] === 1 && ascii(packet, 1, 'vorbis') && packet.length >= 16) {
    codec = 'vorbis';
    channels = packet[11]!;
    sampleRate = packet.readUInt32LE(12);
  } else throw new ContainerError('unsupported', 'Ogg stream that holds neither Opus nor Vorbis');
  checkShape('Ogg', sampleRate, channels);
  // The last page's granule position is the stream's length in samples.
  const tailStart = Math.max(0, src.size - 65536);
  const tail = src.bytes(tailStart, src.size - tailStart);
  let granule = -1;
  for (let i = tail.lastIndexOf('OggS', tail.length, 'latin1'); i >= 0; i = i > 0 ? tail.lastIndexOf('OggS', i - 1, 'latin1') : -1) {
    if (i + 14 > tail.length || tail[i + 4] !== 0) continue;
    const g = tail.readBigInt64LE(i + 6);
    if (g >= 0n) {
      granule = Number(g);
      break;
    }
  }
  if (granule < 0) throw undecodable('Ogg stream without a page that states its length');
  return { container: 'ogg', codec, duration: Math.max(0, granule - preSkip) / sampleRate, sampleRate: codec === 'opus' ? 48000 : sampleRate, channels };
}
