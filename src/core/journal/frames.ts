/**
 * The content the journal keeps of a text frame (a WebSocket message, an SSE event): its JSON with
 * every audio field replaced by its size, bounded per frame. Counted in bytes as it is made, so the
 * journal can hold its contents to a bound in bytes (core/journal/journal.ts).
 */
import { redactKey } from '../state/accounts.js';
import { detached, isSecretField, summarize } from './value.js';

/** A frame's content is at most about this many bytes; a larger one is summarized and marked `truncated`. */
export const FRAME_CONTENT_MAX = 4096;
/** Strings inside a frame's content are kept up to this many characters. */
const STRING_MAX = 1024;
/** A text longer than this is not parsed as JSON (kept as bounded text). */
const PARSE_MAX = 16 * 1024 * 1024;

/** Fields that carry audio as text (hex or base64): shown as their size. */
const AUDIO_FIELDS = new Set(['audio', 'audio_data', 'audio_hex', 'audio_base64']);

export interface FrameContent {
  content: unknown;
  /** About how many bytes the content holds (its JSON length, roughly). */
  bytes: number;
  truncated: boolean;
}

/** An audio field's stand-in: its length in characters (hex: two per byte). */
function audioSize(value: string): { chars: number } {
  return { chars: value.length };
}

/** What a walk adds up: the bytes kept, and whether anything was cut on the way. */
interface Tally {
  bytes: number;
  cut: boolean;
}

/** Walks a parsed value: audio fields become their size, long strings are cut (noted in `tally.cut`); `tally.bytes` adds up the bytes. */
function walk(value: unknown, tally: Tally, depth: number): unknown {
  if (value === null || value === undefined || typeof value === 'boolean' || typeof value === 'number') {
    tally.bytes += 5;
    return value;
  }
  if (typeof value === 'string') {
    tally.bytes += Math.min(value.length, STRING_MAX) + 2;
    // Copied: a string read from a frame would otherwise keep the whole frame alive (value.ts, detached).
    if (value.length <= STRING_MAX) return detached(value);
    tally.cut = true;
    return detached(`${value.slice(0, STRING_MAX)}…(${value.length} chars)`);
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    tally.bytes += 16;
    return { bytes: value.length };
  }
  if (typeof value !== 'object') return undefined;
  if (depth > 8) {
    tally.bytes += 3;
    tally.cut = true;
    return '…';
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, tally, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    tally.bytes += k.length + 4;
    if (typeof v === 'string' && AUDIO_FIELDS.has(k)) out[k] = audioSize(v);
    // A credential, shown redacted as in request bodies (every string under it).
    else if (isSecretField(k)) out[k] = summarize(v, redactKey, 0, true);
    else out[k] = walk(v, tally, depth + 1);
  }
  return out;
}

/** Bounded text of a frame that is not JSON. */
function boundedText(text: string): FrameContent {
  if (text.length <= FRAME_CONTENT_MAX) return { content: detached(text), bytes: text.length, truncated: false };
  return { content: detached(`${text.slice(0, FRAME_CONTENT_MAX)}…(${text.length} chars)`), bytes: FRAME_CONTENT_MAX, truncated: true };
}

/** A hex or base64 string in an `"audio"` field of JSON text, replaced before parsing (no large string is made again). */
const AUDIO_IN_TEXT = /"(audio|audio_data|audio_hex|audio_base64)"\s*:\s*"([A-Za-z0-9+/=]*)"/g;

/**
 * What the journal keeps of a frame: a parsed value or JSON text (parsed when it is JSON; its audio
 * fields as their size), or text that is not JSON (bounded).
 */
export function frameContent(frame: unknown): FrameContent {
  let value = frame;
  if (typeof frame === 'string') {
    const text = frame.trim();
    if (!(text.startsWith('{') || text.startsWith('[')) || text.length > PARSE_MAX) return boundedText(frame);
    try {
      value = JSON.parse(text.replace(AUDIO_IN_TEXT, (_m, key: string, audio: string) => `"${key}":{"chars":${audio.length}}`));
    } catch {
      return boundedText(frame);
    }
  }
  const tally: Tally = { bytes: 0, cut: false };
  const content = walk(value, tally, 0);
  // A string cut on the way (a 4 MiB text field) is within the bound but no longer whole: marked too.
  if (tally.bytes <= FRAME_CONTENT_MAX) return { content, bytes: tally.bytes, truncated: tally.cut };
  // Over the frame's bound: strings cut shorter, arrays to 20 items (the journal's body summary); an
  // object of many fields is still larger, so its JSON is then kept as text, cut at the bound.
  const cut = summarize(content, redactKey);
  const text = JSON.stringify(cut);
  if (text.length <= FRAME_CONTENT_MAX) return { content: cut, bytes: text.length, truncated: true };
  return { content: detached(`${text.slice(0, FRAME_CONTENT_MAX)}…(${text.length} chars)`), bytes: FRAME_CONTENT_MAX, truncated: true };
}
