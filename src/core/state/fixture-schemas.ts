/**
 * Fixture files as services declare them, and core's own (the accounts and the prices). Each service registers its files
 * with their schemas (core/service.ts); a user's folder (EMULATOR_FIXTURES_DIR) may replace any of them file by file,
 * and each is validated at start so a broken one stops the start with its field named.
 */
import * as z from 'zod';
import { accountSchemas, type AccountRegistry } from './account-settings.js';

/** A fixture file as a service registers it: its schema, and optionally a plain-code reading of a plainly valid file. */
export interface FixtureDeclaration<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /**
   * The file's value as the schema would give it, read without zod, or undefined when the file is not plainly valid
   * (the schema then checks it and names the field): for the largest files, whose zod parse is a share of the start.
   */
  readonly quickRead?: (json: unknown) => unknown;
}

export type FixtureDeclarations = Readonly<Record<string, FixtureDeclaration>>;

/** The content of each declared file: what a service adds to `Fixtures`. */
export type FixtureContents<D extends FixtureDeclarations> = { -readonly [K in keyof D]: z.output<D[K]['schema']> };

/** core's own files: the accounts (their settings read the registered capabilities and settings) and the prices. */
export function coreFixtures(registry: AccountRegistry) {
  return {
    'accounts.json': { schema: z.array(accountSchemas(registry).fixture) },
    'billing.json': {
      schema: z.object({
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
    },
  } satisfies FixtureDeclarations;
}

/**
 * The content of every fixture file, by name. core's own are here; each service adds its own where it declares them
 * (`declare module` in its fixtures.ts), so `emu.fixtures.data[name]` has the type of the file's schema.
 */
export interface Fixtures extends FixtureContents<ReturnType<typeof coreFixtures>> {}

export type FixtureName = keyof Fixtures;
