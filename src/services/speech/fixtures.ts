/**
 * The fixture files of the speech service: its system voices and its models (registered in app.ts `speechService`).
 */
import * as z from 'zod';
import { TAG_NAMES } from '../../audio/index.js';
import type { FixtureContents, FixtureDeclarations } from '../../core/state/fixture-schemas.js';
import { readSpeechVoices } from './voices/fixture-read.js';

/**
 * A system voice of the speech service (speech-current.md E21): `voice_id` verbatim, `voice_name` (the
 * English display name; `name` is read as its older spelling), a one-sentence `description`, the
 * fixture-only `language`, and `same_voice_as` for a second spelling of one voice (it sounds the same).
 */
const speechVoice = z.preprocess(
  (v) => (v && typeof v === 'object' && !Array.isArray(v) && !('name' in v) && 'voice_name' in v ? { ...v, name: v.voice_name } : v),
  z
    .object({
      voice_id: z.string().min(1),
      name: z.string({ error: 'voice_name (the display name) is required' }).min(1),
      voice_name: z.string().min(1).optional(),
      language: z.string().min(1),
      description: z.string().min(1).optional(),
      gender: z.enum(['male', 'female', 'neutral']).optional(),
      same_voice_as: z.string().min(1).optional(),
    })
    .transform(({ voice_id, name, voice_name, ...rest }) => ({ voice_id, voice_name: voice_name ?? name, ...rest })),
);

export const speechFixtures = {
  'speech-voices.json': {
    schema: z
      .array(speechVoice)
      .refine(
        (list) => list.every((v) => !v.same_voice_as || list.some((o) => o.voice_id === v.same_voice_as && !o.same_voice_as)),
        'same_voice_as must name another voice_id of the file',
      ),
    quickRead: readSpeechVoices,
  },
  /** Models of the speech service: emotions each accepts, interjection tags, legacy aliases. */
  'speech-models.json': {
    schema: z
      .object({
        models: z
          .array(
            z.object({
              model: z.string().min(1),
              emotions: z.array(z.string().min(1)),
              /** Parenthesized interjections such as `(laughs)` become sounds (else they are read as text). */
              interjection_tags: z.boolean().default(false),
              /** `language_boost` values this model refuses (2013). */
              unsupported_language_boosts: z.array(z.string().min(1)).default([]),
            }),
          )
          .min(1),
        aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
        /** Legacy emotion values the service still takes, each with the emotion whose audio it gets. */
        legacy_emotions: z.record(z.string().min(1), z.string().min(1)).default({}),
        /** Each interjection of the models that honour them, and the engine's tag sound it makes. */
        interjection_tags: z.record(z.string().regex(/^[a-z][a-z-]*$/, 'must be lowercase letters and hyphens'), z.enum(TAG_NAMES)).default({}),
      })
      .refine((c) => Object.values(c.aliases).every((m) => c.models.some((x) => x.model === m)), 'every alias must name a model of models'),
  },
} satisfies FixtureDeclarations;

declare module '../../core/state/fixture-schemas.js' {
  interface Fixtures extends FixtureContents<typeof speechFixtures> {}
}
