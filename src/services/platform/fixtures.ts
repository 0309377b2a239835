/**
 * The fixture files of the voice platform (registered in app.ts `platformService`). The recognition rules are read by
 * both services (services/shared/fixtures.ts) and keep their place among the platform's files in the fixture list.
 */
import * as z from 'zod';
import type { FixtureContents, FixtureDeclarations } from '../../core/state/fixture-schemas.js';
import { sharedFixtures } from '../shared/fixtures.js';

const voice = z.object({
  voice_id: z.string().min(1),
  name: z.string().min(1),
  language: z.string().min(1),
  gender: z.enum(['male', 'female', 'neutral']).default('neutral'),
  /** One sentence for voice listings (`get_voice`); a default is built from gender and language. */
  description: z.string().optional(),
});

export const platformFixtures = {
  'platform-voices.json': {
    schema: z.array(voice),
  },
  'roles.json': {
    schema: z.array(
      z.object({
        id: z.string().min(1),
        name: z.string().min(1),
        language: z.string().min(1),
        description: z.string(),
        voice_id: z.string().min(1),
      }),
    ),
  },
  'agents.json': {
    schema: z.array(
      z.object({
        agentId: z.string().min(1),
        name: z.string().min(1),
        project: z.string().min(1),
        published: z.boolean().default(true),
        voice_id: z.string().min(1).optional(),
      }),
    ),
  },
  /** Read by both services: declared in services/shared/fixtures.ts, listed here where the fixture list has always shown it. */
  'recognition.json': sharedFixtures['recognition.json'],
  'detection.json': {
    schema: z.object({
      rules: z.array(
        z.object({
          sha256: z.string().regex(/^[0-9a-f]{64}$/),
          prediction: z.enum(['Fake', 'Real']),
          confidence: z.number().min(0.5).max(1),
        }),
      ),
    }),
  },
  'diarization.json': {
    schema: z.object({
      rules: z.array(
        z.object({
          sha256: z.string().regex(/^[0-9a-f]{64}$/),
          speakers: z.array(
            z.object({
              speaker_id: z.string().min(1),
              segments: z.array(z.object({ start_time: z.number().min(0), end_time: z.number().min(0) })),
            }),
          ),
        }),
      ),
    }),
  },
  'conversation.json': {
    schema: z.object({
      rules: z.array(
        z.object({
          match: z.string().min(1),
          flags: z
            .string()
            .regex(/^[imsu]*$/)
            .default(''),
          reply: z.string().min(1),
          language: z.string().optional(),
        }),
      ),
      defaults: z.array(z.object({ reply: z.string().min(1), language: z.string().optional() })).min(1),
    }),
  },
  'podcast-pairs.json': {
    schema: z
      .array(
        z.object({
          name: z.string().min(1),
          description: z.string(),
          speaker1: z.string().min(1),
          speaker2: z.string().min(1),
        }),
      )
      .length(5),
  },
  'podcast-hosts.json': {
    schema: z.array(z.string().min(1)),
  },
} satisfies FixtureDeclarations;

declare module '../../core/state/fixture-schemas.js' {
  interface Fixtures extends FixtureContents<typeof platformFixtures> {}
}
