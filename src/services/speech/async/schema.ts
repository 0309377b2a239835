/**
 * `POST /v1/t2a_async_v2` and `GET /v1/query/t2a_async_query_v2` (speech-beyond.md section 6, rule
 * 12.12). Fields shared with `/v1/t2a_v2` (voice_setting, pronunciation_dict, voice_modify…) are
 * checked by the T2A rules; this schema knows what differs: `text_file_id` and `audio_sample_rate`
 * (the general enum, except for `opus`, whose rates are the task's business: formats.ts).
 */
import * as z from 'zod';
import { idField } from '../files/schema.js';
import { int64 } from '../integers.js';

export const ASYNC_SAMPLE_RATES = [8000, 16000, 22050, 24000, 32000, 44100] as const;

export const asyncBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }),
  text: z.string({ error: 'must be a string' }).nullish(),
  text_file_id: idField.nullish(),
  voice_setting: z.looseObject({}, { error: (i) => (i.input === undefined ? 'is required' : 'must be an object') }),
  audio_setting: z
    .looseObject({
      audio_sample_rate: int64(z.int({ error: `must be one of ${ASYNC_SAMPLE_RATES.join(', ')}` })).nullish(),
      channel: int64(z.union([z.literal(1), z.literal(2)], { error: 'must be 1 or 2' })).nullish(),
    })
    // Opus takes its own rates, and any other one fails the task rather than the request (E12):
    // the general enum binds every other format.
    .superRefine((a, ctx) => {
      const rate = a.audio_sample_rate;
      if (rate == null || a.format === 'opus' || (ASYNC_SAMPLE_RATES as readonly number[]).includes(rate)) return;
      ctx.addIssue({ code: 'custom', path: ['audio_sample_rate'], message: `must be one of ${ASYNC_SAMPLE_RATES.join(', ')}` });
    })
    .nullish(),
});
export type AsyncBody = z.output<typeof asyncBody>;

export const queryParams = z.looseObject({ task_id: idField });
