/**
 * A typed client of the control plane (`/_emulator`, on every listener): reset, clock, accounts,
 * faults, journal, verification, hear, state, fixtures, probes, metrics and the API documents. It
 * speaks HTTP only (the global fetch), so it works the same on the handle `startEmulator()` returns
 * (`emu.control`) and against an emulator running elsewhere (a container in CI):
 *
 *   const control = new ControlClient({ url: 'http://127.0.0.1:8900', token: process.env.EMULATOR_CONTROL_TOKEN });
 *   await control.reset();
 *   await control.clock.advance(60_000);
 *
 * Every call has a deadline (`timeoutMs`, per client and per call) covering the answer and its body.
 * Every failure throws a ControlClientError naming the URL and what came back: a status other than
 * 2xx (with the control plane's message), an answer not of the expected shape (HTML, `null`: a wrong
 * URL never passes), or no whole answer (status 0).
 *
 * The class holds the transport and the probes, reset, state and documents; each other control area's
 * calls are a file of client/areas/ (clock, accounts, faults, journal with verify and speak, report,
 * hear, tapes, fixtures), along the seams of the types in client/types/.
 */
import { ControlClientError } from './errors.js';
import { send, expectOk, expectShape, type Call, type CallOptions } from './transport.js';
import type {
  ControlReply,
  HealthView,
  HearResult,
  SpeakRequest,
  SpokenAudio,
  JournalQuery,
  LatencyReport,
  OpenApiName,
  ReadyView,
  ResetAccountResult,
  ResetAllResult,
  StateView,
  TapesCheckReport,
  TapesReplayRequest,
  TapesView,
  VerifyRequest,
  VerifyResult,
} from './types.js';
import type { Caller } from './areas/caller.js';
import { clockCalls } from './areas/clock.js';
import { accountsCalls } from './areas/accounts.js';
import { faultsCalls } from './areas/faults.js';
import { journalCalls, speakAudio, verifyJournal } from './areas/journal.js';
import { checkTapes, loadedTapes, replayTapes, stopReplay } from './areas/tapes.js';
import { latencyReport } from './areas/report.js';
import { hearAudio } from './areas/hear.js';
import { fixturesCalls } from './areas/fixtures.js';

export type { CallOptions } from './transport.js';

export interface ControlClientOptions {
  /** Base URL of any of the emulator's listeners, e.g. `http://127.0.0.1:8900`. */
  url: string;
  /** The control token (`EMULATOR_CONTROL_TOKEN`), when the emulator was started with one. */
  token?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  /** Each call's deadline in ms, answer and body (default 30,000); a call's own `timeoutMs` overrides it. */
  timeoutMs?: number;
}

/** A raw call (`ControlClient.request`): any method and path under `/_emulator`, a JSON body or raw bytes. */
export interface RawCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | (string & {});
  /** The path under `/_emulator` with its query string if any, e.g. `/journal?limit=1`. */
  path: string;
  /** A JSON body. */
  json?: unknown;
  /** Raw bytes with their content type (`hear`'s audio). */
  raw?: { bytes: Uint8Array; contentType: string };
}

export class ControlClient {
  /** The control plane's base URL (`<url>/_emulator`). */
  readonly baseUrl: string;
  readonly #transport: { baseUrl: string; token: string | undefined; fetch: typeof globalThis.fetch; timeoutMs: number };

  constructor(options: ControlClientOptions) {
    if (!options || typeof options.url !== 'string' || !/^https?:\/\//.test(options.url)) {
      throw new TypeError(`ControlClient: url must be an http(s) URL of an emulator listener (got ${JSON.stringify(options?.url)})`);
    }
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new TypeError(`ControlClient: timeoutMs must be a positive number of ms (got ${timeoutMs})`);
    this.baseUrl = `${options.url.replace(/\/+$/, '')}/_emulator`;
    this.#transport = { baseUrl: this.baseUrl, token: options.token, fetch: options.fetch ?? globalThis.fetch, timeoutMs };
  }

  /** Sends one call; answers the whole answer of a 2xx (or an accepted) status, else throws. */
  async #send(call: Call, options?: CallOptions): Promise<ControlReply> {
    return expectOk(await send(this.#transport, call, options), call);
  }

  /** Sends one call and answers its JSON, checked to be `what` (`holds`). */
  async #json<T>(call: Call, what: string, holds: (body: any) => boolean, options?: CallOptions): Promise<T> {
    return expectShape<T>(await this.#send(call, options), what, holds);
  }

  /** What the areas' calls (client/areas/) use of this client. */
  readonly #caller: Caller = {
    send: (call, options) => this.#send(call, options),
    json: (call, what, holds, options) => this.#json(call, what, holds, options),
  };

  /**
   * Any control-plane call, answered whatever its status (2xx or not) with the status, headers, bytes,
   * text and parsed JSON: for a route or a refusal the typed methods do not cover. Throws a
   * ControlClientError (status 0) only when no whole answer came within the deadline.
   */
  request(call: RawCall, options?: CallOptions): Promise<ControlReply> {
    const [path, search] = call.path.split(/\?(.*)/s, 2) as [string, string | undefined];
    const query: Record<string, string[]> = {};
    for (const [k, v] of new URLSearchParams(search ?? '')) (query[k] ??= []).push(v);
    return send(this.#transport, { method: call.method as Call['method'], path, query, body: call.json, raw: call.raw }, options);
  }

  // ---- probes ----

  /** Status and version; the service URLs too when the token is right (or none is set). */
  health(options?: CallOptions): Promise<HealthView> {
    return this.#json(
      { method: 'GET', path: '/health' },
      'the health answer {status: "ok", version}',
      (b) => b.status === 'ok' && typeof b.version === 'string',
      options,
    );
  }

  /** True when the emulator answers requests (false while it starts or closes). */
  async ready(options?: CallOptions): Promise<boolean> {
    const call: Call = { method: 'GET', path: '/readyz', accept: [503] };
    const reply = await this.#send(call, options);
    const view = expectShape<ReadyView>(reply, 'the readiness answer {status, version}', (b) => typeof b.status === 'string');
    return view.status === 'ready' && reply.status === 200;
  }

  /**
   * Waits until the emulator is ready (a container just started): polls readyz, connection errors
   * included, each poll bounded by what is left of `timeoutMs` (default 30,000).
   */
  async waitUntilReady(options: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const deadline = performance.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) {
        const why = last instanceof Error ? `; last: ${last.message}` : last === 'starting' ? '; it answered not ready' : '';
        throw new ControlClientError(
          0,
          `the emulator was not ready within ${timeoutMs} ms${why}`,
          undefined,
          'GET /_emulator/readyz',
          `${this.baseUrl}/readyz`,
        );
      }
      try {
        if (await this.ready({ timeoutMs: Math.max(1, Math.min(left, this.#transport.timeoutMs)), signal: options.signal })) return;
        last = 'starting';
      } catch (err) {
        if (options.signal?.aborted) throw err;
        last = err;
      }
      const pause = Math.min(options.intervalMs ?? 200, deadline - performance.now());
      if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    }
  }

  // ---- reset ----

  /** Drops every resource, session, fault rule and journal entry; `fixtures: true` also restores the start-up fixture files. */
  reset(options: { fixtures?: boolean } & CallOptions = {}): Promise<ResetAllResult> {
    const { fixtures, ...call } = options;
    return this.#json(
      { method: 'POST', path: '/reset', query: { fixtures: fixtures === undefined ? undefined : String(fixtures) } },
      'the reset answer {reset: "all"}',
      (b) => b.reset === 'all',
      call,
    );
  }

  /** Drops what one API key owns (its resources, sessions and journal entries). */
  resetAccount(key: string, options?: CallOptions): Promise<ResetAccountResult> {
    return this.#json(
      { method: 'POST', path: '/reset', query: { account: key } },
      'the reset answer {reset: "account"}',
      (b) => b.reset === 'account',
      options,
    );
  }

  // ---- clock ----

  readonly clock = clockCalls(this.#caller);

  // ---- accounts ----

  readonly accounts = accountsCalls(this.#caller);

  // ---- faults ----

  readonly faults = faultsCalls(this.#caller);

  // ---- journal ----

  readonly journal = journalCalls(this.#caller);

  // ---- verify ----

  /**
   * Counts the journal entries the matcher selects and checks the count (at least 1 unless said
   * otherwise). When it does not hold, throws a VerificationError whose message lists the nearest misses.
   */
  verify(request: VerifyRequest, options?: CallOptions): Promise<VerifyResult> {
    return verifyJournal(this.#caller, request, options);
  }

  // ---- tapes ----

  /**
   * Sends every tape of a folder (a path on the emulator's machine) to the emulator again and reports, per tape, where
   * its own answer differs from the recorded one (`POST /_emulator/tapes/check`). Run it on an emulator that neither
   * records nor replays.
   */
  tapesCheck(dir: string, options?: CallOptions): Promise<TapesCheckReport> {
    return checkTapes(this.#caller, dir, options);
  }

  /**
   * Replays a folder of tapes (a path on the emulator's machine) from now on, as `--replay`: requests that arrive after
   * the answer, HTTP and sockets, are answered from its tapes (`PUT /_emulator/tapes/replay`). `strict` and `speed` are
   * `--replay-strict` and `--replay-speed`. A folder that is not one of tapes, or holds a damaged tape, is a 400 naming
   * the file and what is wrong; an emulator that is recording refuses (409).
   */
  tapesReplay(request: TapesReplayRequest, options?: CallOptions): Promise<TapesView> {
    return replayTapes(this.#caller, request, options);
  }

  /** Stops replaying: the emulator's own answers again (`DELETE /_emulator/tapes/replay`). */
  tapesStopReplay(options?: CallOptions): Promise<TapesView> {
    return stopReplay(this.#caller, options);
  }

  /** The tapes in effect (`GET /_emulator/tapes/replay`): mode `replay`, `record`, `record-missing`, or null. */
  tapesLoaded(options?: CallOptions): Promise<TapesView> {
    return loadedTapes(this.#caller, options);
  }

  // ---- report ----

  /**
   * The latency figures of the journal's audio streams (`GET /_emulator/report`): per operation and
   * for all entries the query selects, time to first audio, turn latency, real-time factor, overrun,
   * time to stop, gaps and stalls, with nearest-rank p50/p95/p99.
   */
  report(query: JournalQuery = {}, options?: CallOptions): Promise<LatencyReport> {
    return latencyReport(this.#caller, query, options);
  }

  // ---- hear ----

  /**
   * What a listener heard in a recording (`POST /_emulator/hear`): the emulator's syntheses found in
   * it, the words heard with their times, and what differs (gaps, repeats, skips, cuts). WAV, MP3,
   * FLAC and Ogg are told from their first bytes; raw PCM needs `contentType: 'audio/pcm;rate=16000'`.
   */
  hear(audio: Uint8Array | ArrayBuffer, options: { contentType?: string } & CallOptions = {}): Promise<HearResult> {
    return hearAudio(this.#caller, audio, options);
  }

  /** A caller's audio with seeded impairments (`POST /_emulator/speak`); the emulator recognises its text exactly. */
  speak(request: SpeakRequest, options?: CallOptions): Promise<SpokenAudio> {
    return speakAudio(this.#caller, request, options);
  }

  // ---- state ----

  /** Accounts with their resources, open sockets and pending timers (a page: `limit`, `cursor`), and totals. */
  state(page: { limit?: number; cursor?: string } & CallOptions = {}): Promise<StateView> {
    const { limit, cursor, ...options } = page;
    return this.#json({ method: 'GET', path: '/state', query: { limit, cursor } }, 'the state {accounts: [...]}', (b) => Array.isArray(b.accounts), options);
  }

  // ---- fixtures ----

  readonly fixtures = fixturesCalls(this.#caller);

  // ---- metrics and documents ----

  /** Prometheus text of the emulator's metrics. */
  async metrics(options?: CallOptions): Promise<string> {
    const reply = await this.#send({ method: 'GET', path: '/metrics' }, options);
    if (!/^text\/plain/i.test(reply.headers.get('content-type') ?? '')) {
      throw new ControlClientError(
        reply.status,
        `expected Prometheus text, got ${reply.headers.get('content-type') ?? 'no content type'} — is this the URL of an emulator?`,
        reply.text,
        reply.request,
        reply.url,
      );
    }
    return reply.text;
  }

  /** The OpenAPI 3.1 document of the speech service, the platform or the control plane. */
  openApi(name: OpenApiName, options?: CallOptions): Promise<Record<string, unknown>> {
    return this.#json({ method: 'GET', path: `/openapi/${name}.json` }, 'an OpenAPI document', (b) => typeof b.openapi === 'string', options);
  }

  /** The AsyncAPI 3.0 document of the WebSockets. */
  asyncApi(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.#json({ method: 'GET', path: '/asyncapi.json' }, 'an AsyncAPI document', (b) => typeof b.asyncapi === 'string', options);
  }
}
