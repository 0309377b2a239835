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
