import * as z from 'zod';

/**
 * JSON mode of `POST /v1/audio/ai-detect` (the other mode is multipart with the file in field `audio`,
 * whose body reads as `{}` here). `audio_url` is required in JSON mode: the model checks it.
 */
export const detectUrlRequest = z.preprocess(
  (body) => body ?? {},
  z.object(
    { audio_url: z.string({ error: 'audio_url must be a string' }).nullish().describe('http(s) URL of a .wav or .mp3 file') },
    { error: 'request body must be a JSON object with audio_url' },
  ),
);

export const detectionData = z.object({
  prediction: z.enum(['Fake', 'Real']),
  /** Four decimals, 0.5000 to 1.0000: confidence in the predicted class. */
  confidence: z.string().regex(/^(0\.[5-9]\d{3}|1\.0000)$/),
  descriptor: z.enum(['Definitely', 'Likely', 'Unsure, but leaning']),
});
export type DetectionData = z.infer<typeof detectionData>;

/** Largest file accepted (spec: 50 MB); beyond it HTTP 413 without the envelope. */
/** 50 MB in the spec's unit (decimal megabytes). */
export const DETECTION_MAX_BYTES = 50_000_000;
export const DETECTION_EXTENSIONS = ['.wav', '.mp3'] as const;
