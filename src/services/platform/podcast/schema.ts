import * as z from 'zod';
import { describeValue } from '../../../core/http/describe.js';

export const MAX_DIALOGUE_CHARS = 4000;
export const SPEED_MIN = 200;
export const SPEED_MAX = 500;
export const SPEED_DEFAULT = 250;
/** Podcast audio (docs/platform-http.md, Podcast): MP3, 24 kHz, mono, 128 kbps. */
export const PODCAST_AUDIO = { sampleRate: 24_000, channels: 1 as const, bitrate: 128_000 };
export const URL_VALIDITY_MS = 60 * 60 * 1000;
export const CUSTOM = 'Custom';

/** An optional text field: a string or absent (`null` too); blank counts as absent; the message names the field. */
const optionalText = (field: string, what: string) =>
  z
    .string({ error: `${field} must be a string` })
    .nullish()
    .transform((value) => (value?.trim() ? value.trim() : undefined))
    .describe(what);

const speedText = (input: unknown) => `speed must be a number from ${SPEED_MIN} to ${SPEED_MAX}, got ${describeValue(input)}`;

/**
 * `POST /v1/audio/podcast` body. Fields are checked in this order, each with its own words (10001):
 * dialogueText (required, a string, at most 4000 characters, not empty), speed (200 to 500), then the
 * three optional texts. The model checks the rest (pair, prompts, content safety).
 */
export const podcastRequest = z.object(
  {
    dialogueText: z
      .string({ error: (iss) => (iss.input == null ? 'dialogueText is required' : 'dialogueText must be a string') })
      .refine((text) => [...text].length <= MAX_DIALOGUE_CHARS, {
        error: (iss) => `dialogueText has ${[...String(iss.input)].length} characters; at most ${MAX_DIALOGUE_CHARS} are allowed`,
      })
      .refine((text) => text.split(/\r\n|\r|\n/).some((line) => line.trim()), { error: 'dialogueText is empty: give one sentence per line' })
      .describe('At most 4000 characters; one sentence per line; odd lines speaker 1, even lines speaker 2'),
    speed: z
      .number({ error: (iss) => speedText(iss.input) })
      .min(SPEED_MIN, { error: (iss) => speedText(iss.input) })
      .max(SPEED_MAX, { error: (iss) => speedText(iss.input) })
      .nullish()
      .describe('200 to 500, default 250 (normal pace)'),
    pairSelection: optionalText('pairSelection', 'One of the five preset pairs, or Custom (with both prompts); default the first preset'),
    audioPromptSpk1: optionalText('audioPromptSpk1', 'https URL on the whitelist: voice of speaker 1'),
    audioPromptSpk2: optionalText('audioPromptSpk2', 'https URL on the whitelist: voice of speaker 2'),
  },
  { error: 'request body must be a JSON object' },
);

/** The route's body: no body (or `null`) reads as `{}`. */
export const podcastBody = z.preprocess((body) => body ?? {}, podcastRequest);
export type PodcastBody = z.output<typeof podcastBody>;

export const podcastData = z.object({
  audioUrl: z.string(),
  objectKey: z.string(),
  durationSec: z.number(),
  traceId: z.string(),
});
export type PodcastData = z.infer<typeof podcastData>;
