/**
 * The shape of every fixture file under fixtures/. A user's folder (EMULATOR_FIXTURES_DIR) may replace
 * any of them file by file; each is validated at start so a broken one stops the start with its field named.
 */
import { isAbsolute } from 'node:path';
import * as z from 'zod';
import { TAG_NAMES } from '../../audio/text/tokens.js';
import { fixtureAccountSchema } from './account-settings.js';

const voice = z.object({
  voice_id: z.string().min(1),
  name: z.string().min(1),
  language: z.string().min(1),
  gender: z.enum(['male', 'female', 'neutral']).default('neutral'),
  /** One sentence for voice listings (`get_voice`); a default is built from gender and language. */
  description: z.string().optional(),
});

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

export const fixtureSchemas = {
  'accounts.json': z.array(fixtureAccountSchema),
  'billing.json': z.object({
    prices_micro: z.object({
      speech_character: z.int().min(0),
      platform_tts_character: z.int().min(0),
      call_second: z.int().min(0),
      podcast_audio_second: z.int().min(0),
      recognition_audio_second: z.int().min(0),
      detection_audio_second: z.int().min(0),
      diarization_audio_second: z.int().min(0),
      conversation_audio_second: z.int().min(0),
      agent_second: z.int().min(0),
    }),
    free_call_seconds: z.int().min(0).default(0),
  }),
  'speech-voices.json': z
    .array(speechVoice)
    .refine(
      (list) => list.every((v) => !v.same_voice_as || list.some((o) => o.voice_id === v.same_voice_as && !o.same_voice_as)),
      'same_voice_as must name another voice_id of the file',
    ),
  /** Models of the speech service: emotions each accepts, interjection tags, legacy aliases. */
  'speech-models.json': z
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
  'platform-voices.json': z.array(voice),
  'roles.json': z.array(
    z.object({
      id: z.string().min(1),
      name: z.string().min(1),
      language: z.string().min(1),
      description: z.string(),
      voice_id: z.string().min(1),
    }),
  ),
  'agents.json': z.array(
    z.object({
      agentId: z.string().min(1),
      name: z.string().min(1),
      project: z.string().min(1),
      published: z.boolean().default(true),
      voice_id: z.string().min(1).optional(),
    }),
  ),
  'recognition.json': z.object({
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
  'detection.json': z.object({
    rules: z.array(
      z.object({
        sha256: z.string().regex(/^[0-9a-f]{64}$/),
        prediction: z.enum(['Fake', 'Real']),
        confidence: z.number().min(0.5).max(1),
      }),
    ),
  }),
  'diarization.json': z.object({
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
  'conversation.json': z.object({
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
  'podcast-pairs.json': z
    .array(
      z.object({
        name: z.string().min(1),
        description: z.string(),
        speaker1: z.string().min(1),
        speaker2: z.string().min(1),
      }),
    )
    .length(5),
  'podcast-hosts.json': z.array(z.string().min(1)),
  'content-safety.json': z.object({ terms: z.array(z.string().min(1)) }),
  'remote-audio.json': z.array(
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
} as const;

export type FixtureName = keyof typeof fixtureSchemas;
export type Fixtures = { [K in FixtureName]: z.output<(typeof fixtureSchemas)[K]> };
