/**
 * Account-level settings of the speech service that tests may change through the control plane (and
 * the accounts fixture): the bidirectional socket's buffering numbers (speech-current.md rule E6/E8)
 * and the pace of speech-to-text's event stream (E3).
 * Absent values take the defaults the speech service documents.
 */
import * as z from 'zod';

export const bidiSettingsSchema = z
  .object({
    min_clause_chars: z.int().min(1).max(10_000),
    max_sentence_chars: z.int().min(2).max(9_999),
    silence_ms: z.int().min(1).max(3_600_000),
    min_tail_chars: z.int().min(1).max(10_000),
    backstop_ms: z.int().min(1).max(3_600_000),
    max_pending_chars: z.int().min(1).max(1_000_000),
  })
  .partial()
  .strict();

/**
 * Speech-to-text's event stream (rule E3): each delta leaves once the emulator clock has moved this
 * fraction of its sentence's end time past the request (0, the default, sends them at once).
 */
export const sttSettingsSchema = z
  .object({ stream_pace: z.number().min(0).max(100) })
  .partial()
  .strict();

export const speechSettingsSchema = z.object({ bidi: bidiSettingsSchema.optional(), stt: sttSettingsSchema.optional() }).strict();

export type SpeechSettings = z.infer<typeof speechSettingsSchema>;

declare module '../../core/state/account-settings.js' {
  /** The account's `speech_settings` (registered with its schema in app.ts `speechService`). */
  interface ServiceSettings extends SpeechSettings {}
}
