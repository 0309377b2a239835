/**
 * Wire shapes of `POST /v1/speech_to_text` (speech-current.md section 1, rules E1-E4): the multipart
 * parts and the `language` header as the OpenAPI document shows them, the answers of each
 * `response_format`, and the error body with a real HTTP status. The parts are read by the route
 * (multipart streams); model.ts checks them in order.
 */
import * as z from 'zod';

export const STT_PATH = '/v1/speech_to_text';
export const STT_MODEL = 'asr-1.0';
export const RESPONSE_FORMATS = ['json', 'verbose_json', 'srt', 'vtt'] as const;
export const TIMESTAMP_LEVELS = ['', 'sentence', 'word'] as const;
/** The documented language hints (the `language` header). */
export const LANGUAGES = ['zh', 'yue', 'en', 'ja', 'ko', 'th', 'vi', 'id', 'ms', 'fil', 'ar', 'tr', 'fr', 'de', 'es', 'it', 'pt', 'pl', 'ru', 'uk'] as const;

export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** The multipart form, for the document (the route reads the parts as a stream). */
export const sttForm = z.object({
  model: z.literal(STT_MODEL).describe('the only model'),
  file: z
    .string()
    .meta({ format: 'binary' })
    .describe('one audio file: wav, aiff, flac, mp3, aac, m4a (AAC/ALAC), ogg (Opus/Vorbis); at most 52,428,800 bytes and 500 s'),
  response_format: z.enum(RESPONSE_FORMATS).default('json').optional(),
  timestamp_level: z.enum(TIMESTAMP_LEVELS).default('sentence').optional().describe('verbose_json, srt and vtt only; "" means sentence'),
  stream: z.enum(['true', 'false']).default('false').optional().describe('true only with response_format json (any case)'),
  language: z.string().optional().describe('accepted and ignored: the hint is the language header'),
});

export const sttHeaders = z.object({
  language: z.enum(LANGUAGES).optional().describe('language hint (any case); absent or empty means mixed mode'),
});

const segment = z.object({ id: z.int(), start: z.number(), end: z.number(), speaker: z.string(), text: z.string() });

export const sttJson = z.object({ text: z.string(), duration: z.number().describe('seconds'), trace_id: z.string() });
export const sttVerboseJson = z.object({
  text: z.string(),
  duration: z.number(),
  n_speakers: z.int(),
  segments: z.array(segment),
  trace_id: z.string(),
});

/** Section 1.6: an error with its real HTTP status. */
export const sttError = z.object({
  type: z.literal('error'),
  error: z.object({ type: z.string(), message: z.string(), http_code: z.string() }),
  request_id: z.string(),
});

/** The route's schema: documents only (parts are read and checked by the route and model). */
export const sttRouteSchema = {
  summary: 'Speech to text (asr-1.0)',
  consumes: ['multipart/form-data'],
  body: sttForm,
  headers: sttHeaders,
  response: {
    200: z.union([sttJson, sttVerboseJson]).describe('json or verbose_json; srt is text/plain, vtt is text/vtt, stream=true is text/event-stream'),
    400: sttError,
    401: sttError,
    402: sttError,
    413: sttError,
    422: sttError,
    429: sttError,
    500: sttError,
  },
};
