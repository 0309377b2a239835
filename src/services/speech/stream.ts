/**
 * Streaming framing of addendum A1: `data: <one-line JSON>\n\n` per chunk, intermediate chunks without
 * `extra_info`, a final chunk with status 2 and `extra_info`. Audio pieces are cut so each event line
 * stays under the line budget: MP3 on frame boundaries, PCM on sample frames.
 */
import type { AudioFormat, AudioMeta } from '../../audio/index.js';

/** Largest audio piece of one intermediate event, in bytes (hex doubles it: 24 KiB per line at most). */
export const MAX_EVENT_AUDIO_BYTES = 12 * 1024;

export interface ExtraInfo {
  audio_length: number;
  audio_sample_rate: number;
  audio_size: number;
  bitrate: number;
  word_count: number;
  invisible_character_ratio: number;
  usage_characters: number;
  audio_format: string;
  audio_channel: number;
}

export function extraInfo(meta: AudioMeta, counts: { wordCount: number; usageCharacters: number; invisibleRatio: number }): ExtraInfo {
  return {
    audio_length: meta.durationMs,
    audio_sample_rate: meta.sampleRate,
    audio_size: meta.sizeBytes,
    bitrate: meta.bitrate,
    word_count: counts.wordCount,
    invisible_character_ratio: counts.invisibleRatio,
    usage_characters: counts.usageCharacters,
    audio_format: meta.format,
    audio_channel: meta.channels,
  };
}

export function sseEvent(body: unknown): string {
  return `data: ${JSON.stringify(body)}\n\n`;
}

export function intermediateEvent(audio: Buffer, traceId: string): string {
  return sseEvent({ data: { audio: audio.toString('hex'), status: 1, ced: '' }, trace_id: traceId, base_resp: { status_code: 0, status_msg: '' } });
}

export function finalEvent(audioHex: string, extra: ExtraInfo, traceId: string): string {
  return sseEvent({ data: { audio: audioHex, status: 2, ced: '' }, extra_info: extra, trace_id: traceId, base_resp: { status_code: 0, status_msg: '' } });
}

/** Length of the MP3 frame starting at `i` (0 when no frame header is there). */
function mp3FrameLength(b: Buffer, i: number): number {
  if (i + 3 >= b.length || b[i] !== 0xff || (b[i + 1]! & 0xe0) !== 0xe0) return 0;
  const v = (b[i + 1]! >> 3) & 3;
  const bi = b[i + 2]! >> 4;
  const si = (b[i + 2]! >> 2) & 3;
  const pad = (b[i + 2]! >> 1) & 1;
  const rates = v === 3 ? [44100, 48000, 32000] : v === 2 ? [22050, 24000, 16000] : [11025, 12000, 8000];
  const table = v === 3 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
  const kbps = table[bi] ?? 0;
  if (!kbps || si > 2) return 0;
  return Math.floor(((v === 3 ? 144000 : 72000) * kbps) / rates[si]!) + pad;
}

/** Cuts an encoder chunk into pieces of at most `max` bytes that keep whole MP3 frames / sample frames. */
export function* pieces(chunk: Buffer, format: AudioFormat, channels: number, max = MAX_EVENT_AUDIO_BYTES): Generator<Buffer> {
  if (chunk.length <= max) {
    if (chunk.length) yield chunk;
    return;
  }
  if (format === 'mp3') {
    let start = 0;
    let at = 0;
    while (at < chunk.length) {
      const len = mp3FrameLength(chunk, at) || chunk.length - at;
      if (at + len - start > max && at > start) {
        yield chunk.subarray(start, at);
        start = at;
      }
      at += len;
    }
    if (at > start) yield chunk.subarray(start, at);
    return;
  }
  const step = format === 'pcm' ? Math.max(1, Math.floor(max / (2 * channels))) * 2 * channels : max;
  for (let at = 0; at < chunk.length; at += step) yield chunk.subarray(at, at + step);
}

/**
 * A streamed FLAC leaves total samples and MD5 zero in STREAMINFO (unknown while streaming). The
 * aggregated file of the final chunk is whole, so it gets the true values, as a one-shot file has.
 */
export function completeFlacHeader(file: Buffer, totalFrames: number, md5: Buffer | null): void {
  if (file.length < 42 || file.toString('latin1', 0, 4) !== 'fLaC') return;
  const hi = Math.floor(totalFrames / 2 ** 32) & 0x0f;
  file[21] = (file[21]! & 0xf0) | hi;
  file.writeUInt32BE(totalFrames >>> 0, 22);
  if (md5 && md5.length === 16) md5.copy(file, 26);
}
