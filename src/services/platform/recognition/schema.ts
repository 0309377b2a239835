import * as z from 'zod';
import { describeValue } from '../../../core/http/describe.js';

export const AUDIO_FORMATS = ['pcm16', 'pcm_16000'] as const;

/**
 * `POST /v1/speech-to-text` body. PCM16 little-endian, 16 kHz, mono, Base64; at least 2 s. Each message
 * is the whole error text of the operation (it names the field); the first problem of a body is reported.
 */
export const speechToTextRequest = z.looseObject(
  {
    audio_data: z
      .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'audio_data is required' : 'audio_data must be a Base64 string') })
      .min(1, 'audio_data is required')
      .describe('Base64 of raw PCM16 LE, 16000 Hz, mono; at least 2 seconds'),
    audio_format: z
      .enum(AUDIO_FORMATS, { error: (iss) => `audio_format must be pcm16 or pcm_16000, got ${describeValue(iss.input)}` })
      .nullish()
      .describe('default pcm16'),
    language: z
      .string({ error: 'language must be a language code string' })
      .max(16, 'language must be a language code string')
      .nullish()
      .describe('language code; auto-detected when absent'),
  },
  { error: 'request body must be a JSON object with audio_data' },
);
export type SpeechToTextRequest = z.output<typeof speechToTextRequest>;

export const RECOGNITION_RATE = 16_000;
/** Shortest audio accepted: 2 s of PCM16 at 16 kHz (20014 below). */
export const MIN_AUDIO_BYTES = 2 * RECOGNITION_RATE * 2;
/** Largest audio accepted: 50 MB of PCM (design: body limits). */
/** 50 MB in the spec's unit (decimal megabytes). */
export const MAX_AUDIO_BYTES = 50_000_000;
/** Body limit: 50 MB of audio in Base64 plus room for the other fields. */
export const BODY_LIMIT = Math.ceil(MAX_AUDIO_BYTES / 3) * 4 + 64 * 1024;

/** The recognition stream's first message (`{meta:{…}}` or flat). */
export const streamMetaSchema = z.object({
  audio_format: z.enum(['pcm16', 'pcm_16000'], { error: 'must be "pcm16" or "pcm_16000"' }).nullish(),
  language: z
    .string({ error: 'must be a string' })
    .regex(/^(auto|[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?)$/, 'must be a language code such as "en" or "zh" (or "auto")')
    .nullish(),
});
