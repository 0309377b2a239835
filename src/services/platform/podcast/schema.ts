import { z } from 'zod';

/**
 * `POST /v1/audio/podcast` body, for documents. The route does not validate with it: the model checks
 * the body in the documented order, where a rule of dialogueText (length, empty) answers before the type
 * of a later field, which a schema run first would reorder.
 */
export const podcastRequest = z.object({
  dialogueText: z.string().describe('At most 4000 characters; one sentence per line; odd lines speaker 1, even lines speaker 2'),
  pairSelection: z.string().optional().describe('One of the five preset pairs, or Custom (with both prompts); default the first preset'),
  audioPromptSpk1: z.string().optional().describe('https URL on the whitelist: voice of speaker 1'),
  audioPromptSpk2: z.string().optional().describe('https URL on the whitelist: voice of speaker 2'),
  speed: z.number().min(200).max(500).optional().describe('200 to 500, default 250 (normal pace)'),
});

export const podcastData = z.object({
  audioUrl: z.string(),
  objectKey: z.string(),
  durationSec: z.number(),
  traceId: z.string(),
});
export type PodcastData = z.infer<typeof podcastData>;

export const MAX_DIALOGUE_CHARS = 4000;
export const SPEED_MIN = 200;
export const SPEED_MAX = 500;
export const SPEED_DEFAULT = 250;
/** Podcast audio (design.md): MP3, 24 kHz, mono, 128 kbps. */
export const PODCAST_AUDIO = { sampleRate: 24_000, channels: 1 as const, bitrate: 128_000 };
export const URL_VALIDITY_MS = 60 * 60 * 1000;
export const CUSTOM = 'Custom';
