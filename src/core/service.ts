/**
 * What a service brings to the emulator, declared in one place: each service exports one `ServiceRegistration`
 * (its app.ts), and the composer (src/app.ts) only composes them. A registration names the service's listeners and
 * the answers they give before any route runs, the capabilities its operations need, its groups of an account's
 * settings, its fixture files with their schemas, and the setup of its operations. Its state areas register
 * themselves on first use (core/state/areas.ts). core never names a service: it reads these.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { AccountRegistry, Capability, ServiceSettings } from './state/account-settings.js';
import { coreFixtures, type FixtureDeclarations } from './state/fixture-schemas.js';
import type { Emulator, EmulatorConfig } from './emulator.js';
import type { EarlyAnswer } from './http/listener-limits.js';
import type { Listener } from './http/request-context.js';

/** One listener of a service: its own port, the service's operations. */
export interface ListenerDeclaration {
  /** Its name in the journal (`listener`) and in fault rules (`service`), added to `Listeners` by the service. */
  readonly name: Listener;
  /** Its port, from the settings. */
  port(config: EmulatorConfig): number;
}

export interface ServiceRegistration {
  readonly name: 'speech' | 'platform';
  /** Its listeners, the main one first; each serves every operation of the service. */
  readonly listeners: readonly [ListenerDeclaration, ...ListenerDeclaration[]];
  /** How long an idle keep-alive connection stays open (Node's default when absent). */
  readonly keepAliveTimeoutMs?: number;
  /** What its operations may need of a key, in the order an account lists them. */
  readonly capabilities: readonly Capability[];
  /** Its groups of an account's `speech_settings`, by name (each group's schema accepts a partial group). */
  readonly accountSettings?: Readonly<Record<string, z.ZodType>>;
  /** Its fixture files with their schemas, in the order the fixture list shows them. */
  readonly fixtures: FixtureDeclarations;
  /** Its answer to a URL the router cannot read, or to a request the HTTP parser refuses. */
  badUrl(emu: Emulator, message: string, url: string | undefined): EarlyAnswer;
  /** Its answer to a request over the connection cap (HTTP 503). */
  busy(emu: Emulator, message: string, url: string | undefined): EarlyAnswer;
  /** Sets its operations up on its app: lifecycle, error shapes, routes. */
  setup(app: FastifyInstance, emu: Emulator): Promise<void>;
  /** How its operations are matched and refreshed on tapes (src/tapes/, docs/tapes.md); absent operations take the defaults. */
  readonly tapes?: TapeDeclarations;
}

/**
 * What the tapes need to know of one operation, declared by its service (the tapes room reads it; core only names
 * the shape). Paths are dotted field paths (`voice_setting.speed`, `data.*.file_id`; `*` is any key or index).
 */
export interface TapeOperation {
  /** Request body fields that vary between runs and never decide a match (a client's own timestamp, a nonce). */
  readonly ignore?: readonly string[];
  /** Query parameters that never decide a match (besides the credential ones, always ignored). */
  readonly ignoreQuery?: readonly string[];
  /**
   * Answer fields made fresh on replay (trace ids, task ids, file ids): each recorded value gets a fresh one of the
   * same shape, used again wherever that value appears later (a request naming it is matched by the recorded one).
   */
  readonly fresh?: readonly string[];
  /**
   * Request body fields the answer repeats at the same place (a JSON-RPC `id`): never part of a match, and a replayed
   * answer carries there the value the client sent instead of the recorded one.
   */
  readonly echo?: readonly string[];
  /** The answer can never be replayed (an operation with no meaning offline); it still records. */
  readonly neverReplay?: boolean;
}

/** By operation, `METHOD /route/pattern` as the service registers it (`POST /v1/t2a_v2`). */
export type TapeDeclarations = Readonly<Record<string, TapeOperation>>;

/** The registrations composed: what the state reads (accounts, fixtures) and the services themselves. */
export interface Registry {
  readonly services: readonly ServiceRegistration[];
  readonly accounts: AccountRegistry;
  /** core's own files, then each service's, then the files `shared` lists (read by several services). */
  readonly fixtures: FixtureDeclarations;
}

/** Composes the registrations; a file or capability listed by several services keeps its first place. */
export function composeRegistry(services: readonly ServiceRegistration[], shared: FixtureDeclarations = {}): Registry {
  const capabilities = [...new Set(services.flatMap((s) => s.capabilities))];
  if (capabilities.length === 0) throw new Error('no service registers a capability');
  const groups = Object.assign({}, ...services.map((s) => s.accountSettings ?? {})) as Record<string, z.ZodType>;
  const accounts: AccountRegistry = {
    capabilities: capabilities as [Capability, ...Capability[]],
    serviceSettings: z.object(groups).strict() as unknown as z.ZodType<ServiceSettings, ServiceSettings>,
  };
  const fixtures: Record<string, FixtureDeclarations[string]> = { ...coreFixtures(accounts) };
  for (const declared of [...services.map((s) => s.fixtures), shared])
    for (const [name, declaration] of Object.entries(declared)) if (!Object.hasOwn(fixtures, name)) fixtures[name] = declaration;
  return { services, accounts, fixtures };
}
