/** WAV/RF64 and AIFF/AIFC: where the samples are, how they are laid out, and the duration they make. */
import { ascii, checkShape, undecodable, type ByteSource, type ContainerInfo } from './source.js';

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

export function readWavInfo(src: ByteSource): ContainerInfo {
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

export function readAiff(src: ByteSource): ContainerInfo {
  const a = aiffLayout(src);
  checkShape('AIFF', Math.round(a.sampleRate), a.channels);
  const codec = a.compression === 'NONE' || a.compression === 'twos' ? 'pcm' : a.compression.trim().toLowerCase();
  return { container: 'aiff', codec, duration: a.frames / a.sampleRate, sampleRate: Math.round(a.sampleRate), channels: a.channels };
}
