/** MP4/M4A (`mdhd` of the audio track, AAC or ALAC) and Ogg (Opus or Vorbis, the last granule position). */
import { ascii, checkShape, ContainerError, undecodable, type ByteSource, type ContainerInfo } from './source.js';

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

export function readMp4(src: ByteSource): ContainerInfo {
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
    if (m.length < (v1 ? 32 : 20)) throw undecodable('truncated MP4 mdhd box');
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

export function readOgg(src: ByteSource): ContainerInfo {
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
