import { z } from 'zod';

/**
 * Wire shapes of platform synthesis (`POST /v1/text-to-speech` and `/stream`). Types only, with
 * messages that name the rule; ranges and catalogues are checked by the model. `null` counts as absent.
 */
function received(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  // JSON numbers beyond the double range (1e400) parse as Infinity: a number, but not a usable one.
  if (typeof input === 'number' && !Number.isFinite(input)) return 'a number out of range';
  return typeof input === 'string' ? 'a string' : typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}

export const requiredString = (what = 'a string') =>
  z.string({ error: (iss) => (iss.input === undefined ? 'is required' : `must be ${what}, got ${received(iss.input)}`) });

export const optionalString = (what = 'a string') =>
  z.string({ error: (iss) => `must be ${what}, got ${received(iss.input)}` }).nullish();

export const ttsRequestSchema = z.object({
  voice_id: requiredString().describe('A platform system voice or a custom voice of the account.'),
  generate_text: requiredString().describe('Text to speak; at most 500 weighted characters (a Chinese character counts 2). Tags like [laughs] may be written inside.'),
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
}, { error: (iss) => `request body must be a JSON object, got ${received(iss.input)}` });

export type TtsRequest = z.output<typeof ttsRequestSchema>;

/** `field: message` of the first problem of a zod error (the message names the field and the rule). */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'request body is invalid';
  const field = issue.path.join('.');
  return field ? `${field}: ${issue.message}` : issue.message;
}
