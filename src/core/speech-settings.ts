/**
 * Account-level settings of the speech service that tests may change through the control plane (and
 * the accounts fixture): the bidirectional socket's buffering numbers (speech-current.md rule E6/E8).
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

export const speechSettingsSchema = z.object({ bidi: bidiSettingsSchema.optional() }).strict();

export type SpeechSettings = z.infer<typeof speechSettingsSchema>;
