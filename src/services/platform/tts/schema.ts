/**
 * Wire shapes of platform synthesis (`POST /v1/text-to-speech` and `/stream`). Types only, with
 * messages that name the rule; ranges and catalogues are checked by the model. `null` counts as absent.
 */
import * as z from 'zod';
import { optionalString, received, requiredString } from '../shared/strings.js';

export const ttsRequestSchema = z.object(
  {
    voice_id: requiredString().describe('A platform system voice or a custom voice of the account.'),
    generate_text: requiredString().describe(
      'Text to speak; at most 500 weighted characters (a Chinese character counts 2). Tags like [laughs] may be written inside.',
    ),
    language: optionalString().describe('Language code; a custom voice without it speaks zh.'),
    text_normalization: z
      .boolean({ error: (iss) => `must be a JSON boolean (true or false), got ${received(iss.input)}` })
      .nullish()
      .describe('Expand numbers, dates and units into words. Default false.'),
    model_id: optionalString().describe('Default std-tts (the only model).'),
    emotion_class: optionalString().describe('Default "default"; the standard model ignores it.'),
    speed: z
      .number({ error: (iss) => `must be a number, got ${received(iss.input)}` })
      .nullish()
      .describe('0.6 to 1.2; absent or 0 means 1.0.'),
    audio_format: optionalString().describe('Absent, empty or wav: WAV; pcm or pcm_s16le: raw PCM S16LE.'),
  },
  { error: (iss) => `request body must be a JSON object, got ${received(iss.input)}` },
);

export type TtsRequest = z.output<typeof ttsRequestSchema>;

/** The route's body: a JSON `null` body reads as no body (the words of the error are the same). */
export const ttsBody = z.preprocess((body) => body ?? undefined, ttsRequestSchema);
