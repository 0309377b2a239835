/**
 * Wire shapes of the bidirectional socket `/ws/v1/t2a_v2_bidi` (speech-current.md section 2). Its
 * `task_start` is the one of `/ws/v1/t2a_v2` (checked by the same code) plus an optional `session_id`;
 * `text` is required on `task_continue`; flush, cancel and finish carry only their event.
 */
import * as z from 'zod';
import { taskStartSchema } from '../ws/schema.js';

export const BIDI_PATH = '/ws/v1/t2a_v2_bidi';

export const bidiTaskStartSchema = taskStartSchema.extend({
  /** Chosen by the client to name the session; echoed on every later event (else the connect_id). */
  session_id: z.string('must be a string').optional(),
});

export const bidiTaskContinueSchema = z.looseObject({
  event: z.literal('task_continue'),
  /** Any granularity; buffered into sentences by the server. */
  text: z.string('must be a string'),
});

/** `task_flush`, `task_cancel`, `task_finish`: only the event. */
const onlyEvent = (name: string) => z.looseObject({ event: z.literal(name) });

/** Every client message, for the AsyncAPI document. */
export const bidiClientMessages = {
  task_start: bidiTaskStartSchema,
  task_continue: bidiTaskContinueSchema,
  task_flush: onlyEvent('task_flush'),
  task_cancel: onlyEvent('task_cancel'),
  task_finish: onlyEvent('task_finish'),
};

/** What every server event carries (speech-current.md 2.4). */
const serverEvent = (name: string) =>
  z.object({
    event: z.literal(name),
    session_id: z.string().describe("the client's session_id, else the connect_id"),
    trace_id: z.string(),
    connect_id: z.string().describe('the connection (15 digits)'),
    base_resp: z.object({ status_code: z.int(), status_msg: z.string() }),
  });

/** Every server event, for the AsyncAPI document: the control events, and the audio of a sentence between its start and end. */
export const bidiServerMessages = {
  connected_success: serverEvent('connected_success'),
  task_started: serverEvent('task_started'),
  sentence_start: serverEvent('sentence_start').describe('a buffered sentence begins synthesis; its audio follows until sentence_end'),
  task_continued: serverEvent('task_continued').extend({
    data: z
      .object({ audio: z.string().describe('hex audio') })
      .nullable()
      .describe('null on a soft error'),
    is_final: z.boolean(),
    extra_info: z
      .object({
        audio_length: z.int(),
        audio_sample_rate: z.int(),
        audio_size: z.int(),
        bitrate: z.int(),
        word_count: z.int(),
        invisible_character_ratio: z.number(),
        usage_characters: z.int(),
        audio_format: z.string(),
        audio_channel: z.int(),
      })
      .partial()
      .optional()
      .describe('on the final message of a sentence'),
  }),
  sentence_end: serverEvent('sentence_end').describe("all of the sentence's audio has been sent"),
  task_flushed: serverEvent('task_flushed'),
  task_canceled: serverEvent('task_canceled'),
  task_finished: serverEvent('task_finished'),
  task_failed: serverEvent('task_failed'),
};
