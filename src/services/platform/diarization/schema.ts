import { z } from 'zod';

/** `POST /v1/diarize` body: one of `object_key` or `url`; `url` wins when both are given. */
export const diarizeRequest = z.object({
  object_key: z.string().min(1).optional().describe('Object key of an audio file of this API key (upload or podcast objectKey).'),
  url: z.string().min(1).optional().describe('Public http(s) URL of the audio; used when both are given.'),
});
export type DiarizeRequest = z.infer<typeof diarizeRequest>;

export const diarizationSegment = z.object({ start_time: z.number(), end_time: z.number() });

export const diarizationSpeaker = z.object({
  speaker_id: z.string(),
  total_dur: z.number(),
  segments: z.array(diarizationSegment),
});

export const diarizationData = z.object({ trace_id: z.string(), speakers: z.array(diarizationSpeaker) });
export type DiarizationData = z.infer<typeof diarizationData>;
export type DiarizationSpeaker = z.infer<typeof diarizationSpeaker>;
