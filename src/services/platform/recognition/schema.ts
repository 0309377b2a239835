import { z } from 'zod';

/** `POST /v1/speech-to-text` body. PCM16 little-endian, 16 kHz, mono, Base64; at least 2 s. */
export const speechToTextRequest = z.object({
  audio_data: z.string().describe('Base64 of raw PCM16 LE, 16000 Hz, mono; at least 2 seconds'),
  audio_format: z.enum(['pcm16', 'pcm_16000']).optional().describe('default pcm16'),
  language: z.string().optional().describe('language code; auto-detected when absent'),
});

/** The success body is bare (no envelope). */
export const transcription = z.object({
  text: z.string(),
  language: z.string(),
  confidence: z.number(),
  duration_ms: z.number(),
});

export const AUDIO_FORMATS = ['pcm16', 'pcm_16000'] as const;
export const RECOGNITION_RATE = 16_000;
/** Shortest audio accepted: 2 s of PCM16 at 16 kHz (20014 below). */
export const MIN_AUDIO_BYTES = 2 * RECOGNITION_RATE * 2;
/** Largest audio accepted: 50 MB of PCM (design: body limits). */
/** 50 MB in the spec's unit (decimal megabytes). */
export const MAX_AUDIO_BYTES = 50_000_000;
/** Body limit: 50 MB of audio in Base64 plus room for the other fields. */
export const BODY_LIMIT = Math.ceil(MAX_AUDIO_BYTES / 3) * 4 + 64 * 1024;
