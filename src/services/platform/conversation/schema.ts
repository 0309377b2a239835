/**
 * Wire shapes of the conversation WebSockets. The first text message is `meta`, accepted flat
 * (`{"voice_id":…}`) and wrapped (`{"meta":{…}}`); unknown fields are ignored.
 */
import * as z from 'zod';
import type { KeyTexts, Refusal } from '../../../core/http/admission.js';

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

/** Longest `text_input` accepted (emulator rule; the spec gives none). */
export const MAX_TEXT_INPUT = 2000;

export const textMetaSchema = streamMetaSchema.extend({
  text_input: z
    .string({ error: 'must be a string' })
    .refine((s) => [...s].length <= MAX_TEXT_INPUT, `must be at most ${MAX_TEXT_INPUT} characters`)
    .nullish(),
});

export interface TurnTimings {
  first_token_ms: number;
  first_audio_ms: number;
  asr_ms: number;
  llm_ms: number;
  tts_ms: number;
  total_ms: number;
}

/** Key texts of the conversation sockets (the key travels in `?api_key=`). */
export const SOCKET_KEY_TEXTS: KeyTexts = {
  missing: 'api_key query parameter is missing',
  invalid: 'api_key is not a valid API key',
  disabled: 'api_key belongs to a disabled API key',
};

/** Close codes: 1008 after client errors (auth, parameters, balance), 1011 after service faults, 1000 after a finished turn, 1001 when idle. */
export const CLOSE_POLICY = 1008;
export const CLOSE_FAULT = 1011;
/** Close code of the idle rule (no client message for 120 s on the emulator clock). */
export const CLOSE_IDLE = 1001;

/**
 * A refusal of the admission path (core/http/admission.ts) on a conversation socket: an `error` event with
 * its string code, then a close; `close_ws` closes with its code and no event.
 */
export function socketRefusal(refusal: Refusal): { event?: { code: string; message: string }; closeCode: number; reason: string } {
  switch (refusal.kind) {
    case 'close_ws':
      return { closeCode: refusal.closeCode, reason: 'injected fault: close_ws' };
    case 'fault_code': {
      const message = `injected fault: error ${refusal.code}`;
      return { event: { code: faultCodeString(refusal.code), message }, closeCode: CLOSE_FAULT, reason: message };
    }
    case 'fault_status': {
      const message = `injected fault: HTTP ${refusal.status}`;
      return { event: { code: faultStatusString(refusal.status), message }, closeCode: CLOSE_FAULT, reason: message };
    }
    case 'key':
      return { event: { code: '20001', message: SOCKET_KEY_TEXTS[refusal.problem] }, closeCode: CLOSE_POLICY, reason: SOCKET_KEY_TEXTS[refusal.problem] };
    case 'capability': {
      const message = `this API key lacks the ${refusal.capability} capability`;
      return { event: { code: '20001', message }, closeCode: CLOSE_POLICY, reason: message };
    }
    case 'upstream':
      return { event: { code: faultStatusString(refusal.status), message: refusal.message }, closeCode: CLOSE_FAULT, reason: refusal.message };
  }
}

const GRPC_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  16: 'UNAUTHENTICATED',
};

/** Codes of the spec's call table keep their digits as the string code. */
const CALL_CODES = new Set([20001, 20003, 40011, 40012, 40013]);

/**
 * String `code` of an injected `code=N` fault on a conversation socket: the call table's codes as
 * digits, 50000/10000/1000 → INTERNAL, timeouts (10006, 1001) → DEADLINE_EXCEEDED, rate limits
 * (10014, 10005, 1002) → RESOURCE_EXHAUSTED, gRPC numbers 1–16 → their names, anything else → digits.
 */
export function faultCodeString(code: number): string {
  if (CALL_CODES.has(code)) return String(code);
  if (code === 50000 || code === 10000 || code === 1000) return 'INTERNAL';
  if (code === 10006 || code === 1001) return 'DEADLINE_EXCEEDED';
  if (code === 10014 || code === 10005 || code === 1002) return 'RESOURCE_EXHAUSTED';
  return GRPC_NAMES[code] ?? String(code);
}

/** String `code` of an injected `status=N` fault on a conversation socket. */
export function faultStatusString(status: number): string {
  if (status === 400) return '20003';
  if (status === 401 || status === 403) return '20001';
  if (status === 402) return '40011';
  if (status === 408 || status === 504) return 'DEADLINE_EXCEEDED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}
