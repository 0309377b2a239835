/**
 * Fixture files both services read: the recognition rules (platform recognition, speech-to-text, voice cloning's
 * transcript), the content-safety terms and the remote audio URLs. The composer (src/app.ts) registers them once.
 */
import { isAbsolute } from 'node:path';
import * as z from 'zod';
import type { FixtureContents, FixtureDeclarations } from '../../core/state/fixture-schemas.js';

/** One timed segment of a transcript (seconds, speaker `S1`, `S2`, …). */
const transcriptSegment = z.object({
  start: z.number().min(0),
  end: z.number().min(0),
  speaker: z
    .string()
    .regex(/^S[1-9][0-9]*$/)
    .default('S1'),
  text: z.string(),
});

export const sharedFixtures = {
  'recognition.json': {
    schema: z.object({
      rules: z.array(
        z.object({
          sha256: z
            .string()
            .regex(/^[0-9a-f]{64}$/)
            .optional(),
          min_ms: z.number().min(0).optional(),
          max_ms: z.number().min(0).optional(),
          text: z.string(),
          language: z.string().default('en'),
          confidence: z.number().min(0).max(1).default(0.9),
          /** Speech to text: the timed segments of the file (else one segment of `text` over the whole audio). */
          segments: z.array(transcriptSegment).optional(),
          /** Speech to text: what the file says under a `language` hint, by code. */
          languages: z.record(z.string().min(1), z.object({ text: z.string(), segments: z.array(transcriptSegment).optional() })).optional(),
        }),
      ),
      defaults: z.array(z.object({ text: z.string(), language: z.string().default('en'), confidence: z.number().min(0).max(1).default(0.85) })).min(1),
    }),
  },
  'content-safety.json': {
    schema: z.object({ terms: z.array(z.string().min(1)) }),
  },
  'remote-audio.json': {
    schema: z.array(
      z.object({
        url: z.url({ protocol: /^https?$/ }),
        // Read from the fixtures folder only: a path that leaves it would hand any host file to a client.
        file: z
          .string()
          .min(1)
          .refine((f) => !isAbsolute(f) && !/^[A-Za-z]:/.test(f) && !f.split(/[/\\]/).includes('..'), {
            message: 'must be a path inside the fixtures folder (relative, without "..")',
          }),
        content_type: z.string().optional(),
      }),
    ),
  },
} satisfies FixtureDeclarations;

declare module '../../core/state/fixture-schemas.js' {
  interface Fixtures extends FixtureContents<typeof sharedFixtures> {}
}
