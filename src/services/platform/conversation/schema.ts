import { z } from 'zod';

/**
 * Wire shapes of the conversation WebSockets. The first text message is `meta`, accepted flat
 * (`{"voice_id":…}`) and wrapped (`{"meta":{…}}`); unknown fields are ignored.
 */
const sessionId = z.string().max(128, 'must be at most 128 characters');
const voiceId = z.string({ error: 'is required (a role id of GET /api/v1/audio/characters)' }).min(1, 'must not be empty');
const language = z.enum(['zh', 'en'], { error: 'must be "zh" or "en"' });
const audioFormat = z.literal('pcm16', { error: 'must be "pcm16" (16 kHz, 16-bit, mono)' });

export const streamMetaSchema = z.object({
  session_id: sessionId.nullish(),
  voice_id: voiceId,
  audio_format: audioFormat.nullish(),
  language: language.nullish(),
});
export type StreamMeta = z.infer<typeof streamMetaSchema>;

/** Longest `text_input` accepted (emulator rule; the spec gives none). */
export const MAX_TEXT_INPUT = 2000;

export const textMetaSchema = streamMetaSchema.extend({
  text_input: z
    .string({ error: 'must be a string' })
    .refine((s) => [...s].length <= MAX_TEXT_INPUT, `must be at most ${MAX_TEXT_INPUT} characters`)
    .nullish(),
});
export type TextMeta = z.infer<typeof textMetaSchema>;

/**
 * `{meta:{…}}` → the inner object, whatever else the wrapper carries (`type`, a timestamp…); a flat
 * object (no `meta` key) stays as it is. No flat meta has a field named `meta`, so this is unambiguous.
 */
export function unwrapMeta(msg: Record<string, unknown>): unknown {
  return msg.meta !== undefined ? msg.meta : msg;
}

/** `{is_final: true}` (wrapped under `meta` too, for clients that wrap every message). */
export function isFinalMessage(msg: Record<string, unknown>): boolean {
  if (msg.is_final === true) return true;
  const inner = msg.meta;
  return typeof inner === 'object' && inner !== null && (inner as Record<string, unknown>).is_final === true;
}

/** The first issue of a failed parse as `field: rule`. */
export function issueText(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join('.');
  const where = field ? `${prefix}${field}` : prefix.replace(/\.$/, '') || 'message';
  return `${where}: ${issue.message}`;
}

/** Parses a text frame as a JSON object, or says why it is not one. */
export function parseJsonObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'text message is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'text message must be a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Server events of the conversation sockets (JSON text frames). */
export type ConversationEvent =
  | { type: 'session_created'; session_id: string }
  | { type: 'asr_partial'; asr_text: string }
  | { type: 'asr_final'; asr_text: string }
  | { type: 'llm_first_token'; first_token: string }
  | { type: 'llm_token'; token: string }
  | ({ type: 'done'; reply_text: string; audio_duration_sec: number } & Partial<TurnTimings>)
  | { type: 'error'; code: string; message: string };

export interface TurnTimings {
  first_token_ms: number;
  first_audio_ms: number;
  asr_ms: number;
  llm_ms: number;
  tts_ms: number;
  total_ms: number;
}
