/**
 * The settings of one account, as the accounts fixture lists them and `PUT /_emulator/accounts/{key}`
 * changes them: one declaration, so the two can never drift apart. The control plane's form differs only
 * where it must: a limit of `null` lifts it, unknown fields are refused, and the free pool of call seconds
 * is set there (the fixture's pool is billing.json's).
 */
import * as z from 'zod';
import { CAPABILITIES } from './accounts.js';
import { streamFaultsSchema } from '../faults/faults.js';
import { speechSettingsSchema } from '../speech-settings.js';

const LIMITS = {
  requests_per_minute: z.int().min(1),
  characters_per_minute: z.int().min(1),
  /** Speech-to-text requests a minute (off unless set). */
  speech_to_text_per_minute: z.int().min(1),
  max_concurrent_calls: z.int().min(1),
} as const;

const SETTINGS = {
  balance_micro: z.int().min(0).optional(),
  capabilities: z.array(z.enum(CAPABILITIES)).optional(),
  project: z.string().min(1).optional(),
  disabled: z.boolean().optional(),
  real_name_verified: z.boolean().optional(),
  speech_settings: speechSettingsSchema.optional(),
};

type LimitName = keyof typeof LIMITS;
const limitsOf = <T extends z.ZodType>(wrap: (schema: (typeof LIMITS)[LimitName]) => T) =>
  Object.fromEntries(Object.entries(LIMITS).map(([name, schema]) => [name, wrap(schema)])) as Record<LimitName, T>;

/** One account of `accounts.json`. */
export const fixtureAccountSchema = z.object({
  key: z.string().min(1),
  ...SETTINGS,
  limits: z.object({ ...limitsOf((s) => s.optional()), single_channel: z.boolean().optional() }).optional(),
});

/** The body of `PUT /_emulator/accounts/{key}`: the settings to change (the others stay). */
export const accountChangeSchema = z
  .object({
    ...SETTINGS,
    free_call_seconds: z.number().min(0).optional(),
    /** Pace and audio faults of every audio stream of the account (docs/voice-agents.md); replaced as a set. */
    stream_faults: streamFaultsSchema.optional(),
    limits: z
      .object({ ...limitsOf((s) => s.nullable().optional()), single_channel: z.boolean().optional() })
      .strict()
      .optional(),
  })
  .strict();
