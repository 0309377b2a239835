/**
 * Reading input audio (uploads, reference audio, detection, diarization): what it is and how long it
 * lasts (from its headers, never by decoding it), and its samples as mono float for WAV, MP3, FLAC and
 * raw PCM16, decoded in slices and never more than a bounded window.
 */
import type { ProbedFormat, ProbeHint, ProbeResult } from './types.js';
import { bufferSource, readContainer } from './container.js';
import { readWav, wavCodecReadable, type WavInfo } from './decode.js';
import { decodeMonoBounded, type DecodeSource } from './decode-slices.js';
import { mp3FrameDuration } from './encode/mp3.js';

/**
 * The most audio decoded into one array: 10 minutes at 48 kHz (110 MB of float). Rules that need more
 * than a window of a longer file reduce it slice by slice (decode-slices.ts) instead.
 */
export const MAX_DECODE_FRAMES = 600 * 48000;

export type AudioProbeErrorCode = 'unsupported' | 'undecodable' | 'empty';

/** Input audio that cannot be read: `code` says whether the format is unknown or the data broken. */
export class AudioProbeError extends Error {
  readonly code: AudioProbeErrorCode;
  constructor(code: AudioProbeErrorCode, message: string) {
    super(message);
    this.name = 'AudioProbeError';
    this.code = code;
  }
}

const MIME: Partial<Record<ProbedFormat, string>> = {
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  webm: 'audio/webm',
  aac: 'audio/aac',
};

/** The container/codec of the bytes by their magic numbers, or a raw-PCM hint; null if unknown. */
export function sniffFormat(b: Buffer, hint: ProbeHint = {}): ProbedFormat | null {
  const ascii = (at: number, s: string) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;
  if ((ascii(0, 'RIFF') || ascii(0, 'RF64')) && ascii(8, 'WAVE')) return 'wav';
  if (ascii(0, 'fLaC')) return 'flac';
  if (ascii(4, 'ftyp')) return 'm4a';
  if (ascii(0, 'OggS')) return /opus/i.test(b.toString('latin1', 0, Math.min(b.length, 64))) ? 'opus' : 'ogg';
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii(0, 'ID3')) return 'mp3';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return (b[1]! & 0x06) === 0 ? 'aac' : 'mp3';
  const name = (hint.filename ?? '').toLowerCase();
  const type = (hint.contentType ?? '').toLowerCase();
  if (hint.rawPcm || /\.(pcm|raw)$/.test(name) || /audio\/(pcm|l16|raw)/.test(type)) return 'pcm';
  return null;
}

// Bounds of a plausible header: anything outside is a broken or hostile file, not audio.
const MIN_RATE = 1000;
const MAX_RATE = 768000;
const MAX_CHANNELS = 64;

function checkShape(what: string, sampleRate: number, channels: number): void {
  if (!Number.isInteger(sampleRate) || sampleRate < MIN_RATE || sampleRate > MAX_RATE || !Number.isInteger(channels) || channels < 1 || channels > MAX_CHANNELS)
    throw new AudioProbeError(
      'undecodable',
      `${what} declares ${channels} channels at ${sampleRate} Hz (channels must be 1-${MAX_CHANNELS}, rate ${MIN_RATE}-${MAX_RATE} Hz)`,
    );
}

/** Rate and channels of raw s16le PCM (hint, else content-type parameters, else 16 kHz mono), and its frame count. */
function rawPcmShape(bytes: Buffer, hint: ProbeHint): { sampleRate: number; channels: number; frames: number } {
  const rate = /rate=(\d+)/.exec(hint.contentType ?? '');
  const ch = /channels=(\d+)/.exec(hint.contentType ?? '');
  const { sampleRate, channels } = hint.rawPcm ?? { sampleRate: rate ? Number(rate[1]) : 16000, channels: ch ? Number(ch[1]) : 1 };
  checkShape('raw PCM', sampleRate, channels);
  const frames = Math.floor(bytes.length / (2 * channels));
  if (!frames) throw new AudioProbeError('empty', 'the raw PCM holds no whole sample frame');
  return { sampleRate, channels, frames };
}

/** The layout of a WAV, checked: plausible header, a codec we read, at least one sample frame. */
function wavOf(bytes: Buffer): WavInfo {
  const w = readWav(bytes);
  if (!w) throw new AudioProbeError('undecodable', 'broken WAV header');
  checkShape('the WAV header', w.sampleRate, w.channels);
  if (!wavCodecReadable(w)) throw new AudioProbeError('unsupported', `WAV codec ${w.audioFormat} at ${w.bitsPerSample} bits per sample is not supported`);
  if (!w.frames) throw new AudioProbeError('empty', 'the WAV data chunk holds no samples');
  return w;
}

/**
 * Channel count from the AudioSpecificConfig in an MP4 `esds` box (the sample entry's own count
 * is 2 by QuickTime convention even for mono AAC), or null.
 */
function mp4AacChannels(b: Buffer): number | null {
  const at = b.indexOf('esds', 0, 'latin1');
  if (at < 0) return null;
  for (let i = at + 8; i < Math.min(b.length - 6, at + 64); i++) {
    if (b[i] !== 0x05) continue;
    let j = i + 1;
    while (b[j] === 0x80 && j < i + 4) j++;
    const len = b[j]!;
    if (len < 2 || len > 64) continue;
    const b0 = b[j + 1]!;
    const b1 = b[j + 2]!;
    const freqIndex = ((b0 & 7) << 1) | (b1 >> 7);
    if (freqIndex === 15) return null;
    const ch = (b1 >> 3) & 15;
    return ch >= 1 && ch <= 7 ? (ch === 7 ? 8 : ch) : null;
  }
  return null;
}

/** Format, sample rate, channels and duration (whole ms) of input audio. */
export async function probeAudio(bytes: Buffer, hint: ProbeHint = {}): Promise<ProbeResult> {
  if (!bytes.length) throw new AudioProbeError('empty', 'the audio is empty');
  const format = sniffFormat(bytes, hint);
  if (!format) throw new AudioProbeError('unsupported', 'unrecognised audio format');
  if (format === 'pcm') {
    const { sampleRate, channels, frames } = rawPcmShape(bytes, hint);
    return { format, sampleRate, channels, durationMs: Math.round((frames / sampleRate) * 1000) };
  }
  if (format === 'wav') {
    const w = wavOf(bytes);
    return { format, sampleRate: w.sampleRate, channels: w.channels, durationMs: Math.round((w.frames / w.sampleRate) * 1000) };
  }
  try {
    const { parseBuffer } = await import('music-metadata'); // loaded on first use (start-up time)
    const meta = await parseBuffer(bytes, { mimeType: MIME[format] ?? 'application/octet-stream', size: bytes.length }, { duration: true, skipCovers: true });
    const sampleRate = meta.format.sampleRate;
    const channels = (format === 'm4a' ? mp4AacChannels(bytes) : null) ?? meta.format.numberOfChannels;
    let seconds = meta.format.duration;
    if (format === 'mp3') seconds = mp3FrameDuration(bytes)?.seconds ?? seconds;
    // A streamed FLAC (no total in STREAMINFO) or an MP3 without a readable header count: the frame
    // headers say how long it is. Never decoded: a 68 KB FLAC can hold ten hours of silence.
    if ((format === 'flac' && !meta.format.numberOfSamples) || (!seconds && (format === 'flac' || format === 'mp3')))
      seconds = readContainer(bufferSource(bytes)).duration;
    if (!sampleRate || !channels || seconds === undefined) throw new Error('no audio stream');
    return { format, sampleRate, channels, durationMs: Math.round(seconds * 1000) };
  } catch (e) {
    if (e instanceof AudioProbeError) throw e;
    throw new AudioProbeError('undecodable', `cannot read ${format} audio: ${(e as Error).message}`);
  }
}

/** What to decode for the bytes (the WAV or raw PCM layout read and checked); throws AudioProbeError. */
export function decodeSourceOf(bytes: Buffer, hint: ProbeHint = {}): DecodeSource {
  if (!bytes.length) throw new AudioProbeError('empty', 'the audio is empty');
  const format = sniffFormat(bytes, hint);
  switch (format) {
    case 'wav':
      return { kind: 'wav', bytes, layout: wavOf(bytes) };
    case 'mp3':
    case 'flac':
      return { kind: format, bytes };
    case 'pcm': {
      const { sampleRate, channels, frames } = rawPcmShape(bytes, hint);
      const layout = {
        sampleRate,
        channels,
        bitsPerSample: 16,
        audioFormat: 1,
        blockAlign: 2 * channels,
        dataOffset: 0,
        dataBytes: frames * 2 * channels,
        frames,
      };
      return { kind: 'wav', bytes, layout };
    }
    default:
      throw new AudioProbeError('unsupported', `cannot decode ${format ?? 'unrecognised'} audio to samples`);
  }
}

/**
 * Mono float samples (channels averaged) of WAV, MP3, FLAC or raw PCM16 audio: the first `maxFrames`
 * sample frames at most (MAX_DECODE_FRAMES by default), decoded in slices that let other requests run.
 */
export async function decodeToMono(bytes: Buffer, hint: ProbeHint = {}, maxFrames = MAX_DECODE_FRAMES): Promise<{ samples: Float32Array; sampleRate: number }> {
  const src = decodeSourceOf(bytes, hint);
  try {
    return await decodeMonoBounded(src, maxFrames);
  } catch (e) {
    if (e instanceof AudioProbeError) throw e;
    throw new AudioProbeError('undecodable', `cannot decode ${src.kind} audio: ${(e as Error).message}`);
  }
}
