/**
 * The settings of one account, as the accounts fixture lists them and `PUT /_emulator/accounts/{key}`
 * changes them: one declaration, so the two can never drift apart. The control plane's form differs only
 * where it must: a limit of `null` lifts it, unknown fields are refused, and the free pool of call seconds
 * is set there (the fixture's pool is billing.json's).
 */
import * as z from 'zod';
import { streamFaultsSchema } from '../faults/faults.js';

/**
 * What an operation may need of a key, by name. core knows none: each service adds its own here
 * (`declare module`, beside its registration) and lists them in its registration (core/service.ts).
 */
export interface Capabilities {}
export type Capability = keyof Capabilities & string;

/**
 * The services' settings of an account (`speech_settings`), by group; each group's fields are merged one by one by
 * a PUT. A service adds its groups here (`declare module`) and registers their schema (core/service.ts).
 */
export interface ServiceSettings {}

/**
 * What the services registered that an account's settings read (core/service.ts composes it from every
 * service's registration): the capabilities a key may hold, in the order an account lists them, and the
 * schema of the services' settings group `speech_settings` (the speech service's; the name is the one
 * the control plane, the accounts fixture and saved states have always used).
 */
export interface AccountRegistry {
  readonly capabilities: readonly [Capability, ...Capability[]];
  readonly serviceSettings: z.ZodType<ServiceSettings, ServiceSettings>;
}

const LIMITS = {
  requests_per_minute: z.int().min(1),
  characters_per_minute: z.int().min(1),
  /** Speech-to-text requests a minute (off unless set). */
  speech_to_text_per_minute: z.int().min(1),
  max_concurrent_calls: z.int().min(1),
} as const;

const settingsOf = (registry: AccountRegistry) => ({
  balance_micro: z.int().min(0).optional(),
  capabilities: z.array(z.enum(registry.capabilities)).optional(),
  project: z.string().min(1).optional(),
  disabled: z.boolean().optional(),
  real_name_verified: z.boolean().optional(),
  speech_settings: registry.serviceSettings.optional(),
});

type LimitName = keyof typeof LIMITS;
const limitsOf = <T extends z.ZodType>(wrap: (schema: (typeof LIMITS)[LimitName]) => T) =>
  Object.fromEntries(Object.entries(LIMITS).map(([name, schema]) => [name, wrap(schema)])) as Record<LimitName, T>;

const made = new WeakMap<AccountRegistry, ReturnType<typeof schemasOf>>();

/** The schemas of an account's settings, made once per set of registered services. */
export function accountSchemas(registry: AccountRegistry): ReturnType<typeof schemasOf> {
  let schemas = made.get(registry);
  if (!schemas) made.set(registry, (schemas = schemasOf(registry)));
  return schemas;
}

function schemasOf(registry: AccountRegistry) {
  const SETTINGS = settingsOf(registry);
  return {
    /** One account of `accounts.json`. */
    fixture: z.object({
      key: z.string().min(1),
      ...SETTINGS,
      limits: z.object({ ...limitsOf((s) => s.optional()), single_channel: z.boolean().optional() }).optional(),
    }),
    /** The body of `PUT /_emulator/accounts/{key}`: the settings to change (the others stay). */
    change: z
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
      .strict(),
  };
}

export type AccountSchemas = ReturnType<typeof accountSchemas>;
