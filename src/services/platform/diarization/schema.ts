import * as z from 'zod';

const OBJECT_KEY = 'Object key of an audio file of this API key (upload or podcast objectKey).';
const URL_TEXT = 'Public http(s) URL of the audio; used when both are given.';

/** Arguments of the `/mcp` tool `diarize`: one of `object_key` or `url`; `url` wins when both are given. */
export const diarizeRequest = z.object({
  object_key: z.string().min(1).optional().describe(OBJECT_KEY),
  url: z.string().min(1).optional().describe(URL_TEXT),
});

/** A source field of the HTTP body: a string, or absent (`null` too); its message names the field. */
const sourceField = (field: string, what: string) =>
  z
    .string({ error: `${field} must be a string` })
    .nullish()
    .describe(what);

/**
 * `POST /v1/diarize` body: the same fields, in the words of the HTTP operation (no body reads as `{}`;
 * a blank field counts as absent, checked by the model). `url` is first: its problem is reported first.
 */
export const diarizeBody = z.preprocess(
  (body) => body ?? {},
  z.object({ url: sourceField('url', URL_TEXT), object_key: sourceField('object_key', OBJECT_KEY) }, { error: 'request body must be a JSON object' }),
);
export type DiarizeBody = z.output<typeof diarizeBody>;

export const diarizationSegment = z.object({ start_time: z.number(), end_time: z.number() });

export const diarizationSpeaker = z.object({
  speaker_id: z.string(),
  total_dur: z.number(),
  segments: z.array(diarizationSegment),
});

export const diarizationData = z.object({ trace_id: z.string(), speakers: z.array(diarizationSpeaker) });
export type DiarizationData = z.infer<typeof diarizationData>;
export type DiarizationSpeaker = z.infer<typeof diarizationSpeaker>;
