/**
 * A typed client of the control plane (`/_emulator`, on every listener): reset, clock, accounts,
 * faults, journal, verification, state, fixtures, probes, metrics and the API documents. It speaks
 * HTTP only (the global fetch), so it works the same on the handle `startEmulator()` returns
 * (`emu.control`) and against an emulator running elsewhere (a container in CI):
 *
 *   const control = new ControlClient({ url: 'http://127.0.0.1:8900', token: process.env.EMULATOR_CONTROL_TOKEN });
 *   await control.reset();
 *   await control.clock.advance(60_000);
 *
 * Any answer other than 2xx throws a ControlClientError with the status and the control plane's message.
 */
import { ControlClientError, VerificationError } from './errors.js';
import type {
  AccountChange,
  AccountView,
  ClockChange,
  ClockView,
  FaultAdded,
  FaultRuleInput,
  FaultRuleView,
  FixtureContent,
  FixtureName,
  FixtureView,
  HealthView,
  JournalAudio,
  JournalEntryView,
  JournalQuery,
  OpenApiName,
  ReadyView,
  ResetAccountResult,
  ResetAllResult,
  StateView,
  VerifyFailure,
  VerifyRequest,
  VerifyResult,
} from './types.js';

export interface ControlClientOptions {
  /** Base URL of any of the emulator's listeners, e.g. `http://127.0.0.1:8900`. */
  url: string;
  /** The control token (`EMULATOR_CONTROL_TOKEN`), when the emulator was started with one. */
  token?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

type Query = Record<string, string | number | boolean | string[] | undefined>;
interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  /** Statuses answered without throwing (readyz's 503). */
  accept?: number[];
}

const seg = (value: string) => encodeURIComponent(value);

export class ControlClient {
  /** The control plane's base URL (`<url>/_emulator`). */
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: ControlClientOptions) {
    if (!options || typeof options.url !== 'string' || !/^https?:\/\//.test(options.url)) {
      throw new TypeError(`ControlClient: url must be an http(s) URL of an emulator listener (got ${JSON.stringify(options?.url)})`);
    }
    this.baseUrl = `${options.url.replace(/\/+$/, '')}/_emulator`;
    this.#token = options.token;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends one call; answers the raw response of a 2xx (or an accepted) status, else throws. */
  async #send(call: Call): Promise<Response> {
    const url = new URL(this.baseUrl + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, item);
      else if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.#fetch(url, { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) });
    if (res.ok || call.accept?.includes(res.status)) return res;
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's page): the text is kept as the body.
    }
    const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
    const detail = typeof message === 'string' ? message : `${res.status} ${res.statusText}`.trim();
    const request = `${call.method} ${url.pathname}`;
    if (res.status === 409 && call.path === '/verify' && typeof body === 'object' && body !== null) {
      throw new VerificationError(res.status, detail, body as VerifyFailure, request);
    }
    throw new ControlClientError(res.status, detail, body, request);
  }

  async #json<T>(call: Call): Promise<T> {
    return (await (await this.#send(call)).json()) as T;
  }

  // ---- probes ----

  /** Status and version; the service URLs too when the token is right (or none is set). */
  health(): Promise<HealthView> {
    return this.#json({ method: 'GET', path: '/health' });
  }

  /** True when the emulator answers requests (false while it starts or closes). */
  async ready(): Promise<boolean> {
    const res = await this.#send({ method: 'GET', path: '/readyz', accept: [503] });
    return ((await res.json()) as ReadyView).status === 'ready' && res.status === 200;
  }

  /** Waits until the emulator is ready (a container just started): polls readyz, connection errors included. */
  async waitUntilReady(options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
    const deadline = performance.now() + (options.timeoutMs ?? 30_000);
    let last: unknown;
    for (;;) {
      try {
        if (await this.ready()) return;
        last = undefined;
      } catch (err) {
        last = err;
      }
      if (performance.now() >= deadline) {
        const why = last instanceof Error ? `: ${last.message}` : '';
        throw new Error(`the emulator at ${this.baseUrl} was not ready within ${options.timeoutMs ?? 30_000} ms${why}`);
      }
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 200));
    }
  }

  // ---- reset ----

  /** Drops every resource, session, fault rule and journal entry; `fixtures: true` also restores the start-up fixture files. */
  reset(options: { fixtures?: boolean } = {}): Promise<ResetAllResult> {
    return this.#json({ method: 'POST', path: '/reset', query: { fixtures: options.fixtures === undefined ? undefined : String(options.fixtures) } });
  }

  /** Drops what one API key owns (its resources, sessions and journal entries). */
  resetAccount(key: string): Promise<ResetAccountResult> {
    return this.#json({ method: 'POST', path: '/reset', query: { account: key } });
  }

  // ---- clock ----

  readonly clock = {
    read: (): Promise<ClockView> => this.#json({ method: 'GET', path: '/clock' }),
    /** Freezes, sets, advances and unfreezes in one call (in that order). */
    change: (change: ClockChange): Promise<ClockView> => this.#json({ method: 'POST', path: '/clock', body: change }),
    freeze: (): Promise<ClockView> => this.clock.change({ freeze: true }),
    unfreeze: (): Promise<ClockView> => this.clock.change({ freeze: false }),
    /** Moves the clock forward; timers that fall due fire, and the work they start is done, before this answers. */
    advance: (ms: number): Promise<ClockView> => this.clock.change({ advance_ms: ms }),
    /** Sets the clock to an instant (ms since the epoch). */
    set: (ms: number): Promise<ClockView> => this.clock.change({ set_ms: ms }),
  };

  // ---- accounts ----

  readonly accounts = {
    /** The settings of one key (404 under strict keys for a key not listed). */
    get: (key: string): Promise<AccountView> => this.#json({ method: 'GET', path: `/accounts/${seg(key)}` }),
    /** Changes the settings named; the others stay. */
    put: (key: string, change: AccountChange): Promise<AccountView> => this.#json({ method: 'PUT', path: `/accounts/${seg(key)}`, body: change }),
  };

  // ---- faults ----

  readonly faults = {
    add: (rule: FaultRuleInput): Promise<FaultAdded> => this.#json({ method: 'POST', path: '/faults', body: rule }),
    list: async (): Promise<FaultRuleView[]> => (await this.#json<{ rules: FaultRuleView[] }>({ method: 'GET', path: '/faults' })).rules,
    /** Deletes every rule. */
    clear: (): Promise<{ deleted: 'all' }> => this.#json({ method: 'DELETE', path: '/faults' }),
    /** Deletes one rule (404 when there is none of that id). */
    remove: (id: string): Promise<{ deleted: string }> => this.#json({ method: 'DELETE', path: `/faults/${seg(id)}` }),
  };

  // ---- journal ----

  readonly journal = {
    /** Entries newest first, filtered by path, API key, listener, headers, query, fault and time window. */
    list: async (query: JournalQuery = {}): Promise<JournalEntryView[]> => {
      const { header, query: params, ...plain } = query;
      // Headers and query parameters travel as repeated `name:value` parameters.
      const asPairs = (o: Record<string, string> | undefined) => (o ? Object.entries(o).map(([k, v]) => `${k}:${v}`) : undefined);
      return (
        await this.#json<{ entries: JournalEntryView[] }>({
          method: 'GET',
          path: '/journal',
          query: { ...plain, header: asPairs(header), query: asPairs(params) },
        })
      ).entries;
    },
    get: (id: string): Promise<JournalEntryView> => this.#json({ method: 'GET', path: `/journal/${seg(id)}` }),
    clear: (): Promise<{ deleted: 'all' }> => this.#json({ method: 'DELETE', path: '/journal' }),
    /** The audio a client streamed on a socket, as WAV (PCM16 mono at the socket's rate). */
    clientAudio: (id: string): Promise<JournalAudio> => this.#bytes(`/journal/${seg(id)}/audio.wav`),
    /** The audio an answer carried as hex, in its format (raw PCM as WAV). */
    answerAudio: (id: string): Promise<JournalAudio> => this.#bytes(`/journal/${seg(id)}/answer-audio`),
  };

  async #bytes(path: string): Promise<JournalAudio> {
    const res = await this.#send({ method: 'GET', path });
    return { bytes: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
  }

  // ---- verify ----

  /**
   * Counts the journal entries the matcher selects and checks the count (at least 1 unless said
   * otherwise). When it does not hold, throws a VerificationError with the count and the near misses.
   */
  verify(request: VerifyRequest): Promise<VerifyResult> {
    return this.#json({ method: 'POST', path: '/verify', body: request });
  }

  // ---- state ----

  /** Accounts with their resources, open sockets and pending timers (a page: `limit`, `cursor`), and totals. */
  state(page: { limit?: number; cursor?: string } = {}): Promise<StateView> {
    const q = new URLSearchParams();
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    if (page.cursor !== undefined) q.set('cursor', page.cursor);
    const qs = q.toString();
    return this.#json({ method: 'GET', path: `/state${qs ? `?${qs}` : ''}` });
  }

  // ---- fixtures ----

  readonly fixtures = {
    list: async (): Promise<FixtureView[]> => (await this.#json<{ fixtures: FixtureView[] }>({ method: 'GET', path: '/fixtures' })).fixtures,
    get: <N extends FixtureName>(name: N): Promise<FixtureView<N>> => this.#json({ method: 'GET', path: `/fixtures/${seg(name)}` }),
    /** Replaces a fixture file now, checked as the start-up files are (a refused one changes nothing). */
    put: <N extends FixtureName>(name: N, content: FixtureContent<N>): Promise<FixtureView<N>> =>
      this.#json({ method: 'PUT', path: `/fixtures/${seg(name)}`, body: content }),
  };

  // ---- metrics and documents ----

  /** Prometheus text of the emulator's metrics. */
  async metrics(): Promise<string> {
    return (await this.#send({ method: 'GET', path: '/metrics' })).text();
  }

  /** The OpenAPI 3.1 document of the speech service, the platform or the control plane. */
  openApi(name: OpenApiName): Promise<Record<string, unknown>> {
    return this.#json({ method: 'GET', path: `/openapi/${name}.json` });
  }

  /** The AsyncAPI 3.0 document of the WebSockets. */
  asyncApi(): Promise<Record<string, unknown>> {
    return this.#json({ method: 'GET', path: '/asyncapi.json' });
  }
}
