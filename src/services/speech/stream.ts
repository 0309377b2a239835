/**
 * Streaming framing of addendum A1: `data: <one-line JSON>\n\n` per chunk, intermediate chunks without
 * `extra_info`, a final chunk with status 2 and `extra_info`. The audio encoder cuts its chunks to
 * the line budget on frame boundaries (`maxChunkBytes`); this file only wraps them in events.
 */
import type { AudioMeta } from '../../audio/index.js';

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
  /** Only when the request paid a voice fee: its cloned or designed voices used for the first time (rule E10). */
  usage_voice_count?: number;
}

export function extraInfo(
  meta: AudioMeta,
  counts: { wordCount: number; usageCharacters: number; invisibleRatio: number; usageVoiceCount?: number },
): ExtraInfo {
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
    ...(counts.usageVoiceCount ? { usage_voice_count: counts.usageVoiceCount } : {}),
  };
}

export function sseEvent(body: unknown): string {
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** Audio as hex; `oddHex` drops the last character (the `hex_odd` fault). */
export function audioHex(audio: Buffer, oddHex = false): string {
  const hex = audio.toString('hex');
  return oddHex ? hex.slice(0, -1) : hex;
}

/** `extra_info` claiming `factor` times its duration and size (the `extra_info_mismatch` fault). */
export function inflatedInfo(extra: ExtraInfo, factor: number): ExtraInfo {
  if (factor === 1) return extra;
  return { ...extra, audio_length: Math.round(extra.audio_length * factor), audio_size: Math.round(extra.audio_size * factor) };
}

/** An intermediate chunk; `subtitle` is what its audio completes (with `subtitle_enable`). */
export function intermediateEvent(audio: Buffer, traceId: string, subtitle?: unknown, oddHex = false): string {
  const data = { audio: audioHex(audio, oddHex), status: 1, ced: '', ...(subtitle ? { subtitle } : {}) };
  return sseEvent({ data, trace_id: traceId, base_resp: { status_code: 0, status_msg: '' } });
}

export function finalEvent(audioHex: string, extra: ExtraInfo, traceId: string): string {
  return sseEvent({ data: { audio: audioHex, status: 2, ced: '' }, extra_info: extra, trace_id: traceId, base_resp: { status_code: 0, status_msg: '' } });
}
