import * as z from 'zod';
import { FORMATS } from '../schema.js';

/**
 * Wire shapes of the WebSocket `/ws/v1/t2a_v2` (speech-beyond.md section 1). Every frame is one JSON
 * object in a text frame; audio travels as hex inside `data.audio`. The fields of `task_start` are the
 * HTTP body's (schema.ts) minus `text`, checked by the same plan; only the socket's own fields are here.
 */
export const WS_PATH = '/ws/v1/t2a_v2';

/** Formats a socket may name: the HTTP ones (`wav` is named so its refusal can say why). */
export const WS_FORMATS = FORMATS;

/** Any client frame: an object with an `event` name (the rest depends on the event). */
export const clientFrameSchema = z.looseObject({ event: z.string() });

/** `task_start`: the socket's own fields; the others go to the HTTP plan as they are. */
export const taskStartSchema = z.looseObject({
  event: z.literal('task_start'),
  model: z.unknown(),
  voice_setting: z
    .looseObject({
      /** The socket's name for the HTTP operation's `text_normalization`. */
      english_normalization: z.boolean('must be a boolean').nullish(),
    })
    .nullish(),
  /** livekit sends normalization at the top level of `task_start`. */
  text_normalization: z.boolean('must be a boolean').nullish(),
  audio_setting: z.looseObject({ format: z.enum(WS_FORMATS, `must be one of ${WS_FORMATS.join(', ')}`).nullish() }).nullish(),
  subtitle_type: z.enum(['sentence', 'word', 'word_streaming'], 'must be one of sentence, word, word_streaming').nullish(),
  continuous_sound: z.boolean('must be a boolean').nullish(),
});
export type TaskStart = z.infer<typeof taskStartSchema>;

/** `task_continue`: one piece of text, synthesized as one unit. A missing text is an empty one (2203). */
export const taskContinueSchema = z.looseObject({
  event: z.literal('task_continue'),
  text: z.string('must be a string').nullish(),
});
