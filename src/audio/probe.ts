// Reading input audio (uploads, reference audio, detection, diarization): what it is, and its
// samples as mono float for WAV, MP3, FLAC and raw PCM16.
import type { ProbedFormat, ProbeHint, ProbeResult } from './types.js';
import { decodeFlac, decodeMp3, decodeWav, readWav, wavCodecReadable, type WavInfo } from './decode.js';
import { mp3FrameDuration } from './encode/mp3.js';

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
    if (format === 'flac' && !meta.format.numberOfSamples) seconds = undefined; // a streamed FLAC: count by decoding
    if (!seconds && (format === 'flac' || format === 'mp3')) {
      const d = await decodeToMono(bytes, hint);
      seconds = d.samples.length / d.sampleRate;
    }
    if (!sampleRate || !channels || seconds === undefined) throw new Error('no audio stream');
    return { format, sampleRate, channels, durationMs: Math.round(seconds * 1000) };
  } catch (e) {
    if (e instanceof AudioProbeError) throw e;
    throw new AudioProbeError('undecodable', `cannot read ${format} audio: ${(e as Error).message}`);
  }
}

/** Mono float samples (channels averaged) of WAV, MP3, FLAC or raw PCM16 audio. */
export async function decodeToMono(bytes: Buffer, hint: ProbeHint = {}): Promise<{ samples: Float32Array; sampleRate: number }> {
  if (!bytes.length) throw new AudioProbeError('empty', 'the audio is empty');
  const format = sniffFormat(bytes, hint);
  try {
    switch (format) {
      case 'wav':
        return decodeWav(bytes, wavOf(bytes));
      case 'mp3':
        return await decodeMp3(bytes);
      case 'flac':
        return await decodeFlac(bytes);
      case 'pcm': {
        const { sampleRate, channels, frames } = rawPcmShape(bytes, hint);
        const samples = new Float32Array(frames);
        for (let i = 0; i < frames; i++) {
          let s = 0;
          for (let c = 0; c < channels; c++) s += bytes.readInt16LE((i * channels + c) * 2);
          samples[i] = s / channels / 32768;
        }
        return { samples, sampleRate };
      }
      default:
        throw new AudioProbeError('unsupported', `cannot decode ${format ?? 'unrecognised'} audio to samples`);
    }
  } catch (e) {
    if (e instanceof AudioProbeError) throw e;
    throw new AudioProbeError('undecodable', `cannot decode ${format} audio: ${(e as Error).message}`);
  }
}
