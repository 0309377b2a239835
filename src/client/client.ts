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
 */
import { ControlClientError } from './errors.js';
import { send, expectOk, expectShape, type Call, type CallOptions } from './transport.js';
import type {
  AccountChange,
  AccountView,
  ClockChange,
  ClockView,
  ControlReply,
  FaultAdded,
  FaultRuleInput,
  FaultRuleView,
  FixtureContent,
  FixtureName,
  FixtureView,
  HealthView,
  HearResult,
  SpeakRequest,
  SpokenAudio,
  JournalAudio,
  JournalEntryView,
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

const seg = (value: string) => encodeURIComponent(value);
const TAPES = 'the tapes in effect {mode, dir, strict, speed, tapes}';
const isTapesView = (b: any) => 'mode' in b && 'dir' in b && typeof b.tapes === 'number';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a hear body is, from its first bytes (raw PCM has no header: its content type must be given). */
function sniffAudio(bytes: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  return undefined;
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

  readonly clock = {
    read: (options?: CallOptions): Promise<ClockView> => this.#json({ method: 'GET', path: '/clock' }, CLOCK, isClock, options),
    /** Freezes, sets, advances and unfreezes in one call (in that order). */
    change: (change: ClockChange, options?: CallOptions): Promise<ClockView> =>
      this.#json({ method: 'POST', path: '/clock', body: change }, CLOCK, isClock, options),
    freeze: (options?: CallOptions): Promise<ClockView> => this.clock.change({ freeze: true }, options),
    unfreeze: (options?: CallOptions): Promise<ClockView> => this.clock.change({ freeze: false }, options),
    /** Moves the clock forward; timers that fall due fire, and the work they start is done, before this answers. */
    advance: (ms: number, options?: CallOptions): Promise<ClockView> => this.clock.change({ advance_ms: ms }, options),
    /** Sets the clock to an instant (ms since the epoch). */
    set: (ms: number, options?: CallOptions): Promise<ClockView> => this.clock.change({ set_ms: ms }, options),
  };

  // ---- accounts ----

  readonly accounts = {
    /** The settings of one key (404 under strict keys for a key not listed). */
    get: (key: string, options?: CallOptions): Promise<AccountView> =>
      this.#json({ method: 'GET', path: `/accounts/${seg(key)}` }, ACCOUNT, isAccount, options),
    /** Changes the settings named; the others stay. */
    put: (key: string, change: AccountChange, options?: CallOptions): Promise<AccountView> =>
      this.#json({ method: 'PUT', path: `/accounts/${seg(key)}`, body: change }, ACCOUNT, isAccount, options),
  };

  // ---- faults ----

  readonly faults = {
    add: (rule: FaultRuleInput, options?: CallOptions): Promise<FaultAdded> =>
      this.#json({ method: 'POST', path: '/faults', body: rule }, 'the added rule {id, rule}', (b) => typeof b.id === 'string' && isObject(b.rule), options),
    list: async (options?: CallOptions): Promise<FaultRuleView[]> =>
      (await this.#json<{ rules: FaultRuleView[] }>({ method: 'GET', path: '/faults' }, 'the rules {rules: [...]}', (b) => Array.isArray(b.rules), options))
        .rules,
    /** Deletes every rule. */
    clear: (options?: CallOptions): Promise<{ deleted: 'all' }> => this.#json({ method: 'DELETE', path: '/faults' }, DELETED, isDeleted, options),
    /** Deletes one rule (404 when there is none of that id). */
    remove: (id: string, options?: CallOptions): Promise<{ deleted: string }> =>
      this.#json({ method: 'DELETE', path: `/faults/${seg(id)}` }, DELETED, isDeleted, options),
  };

  // ---- journal ----

  readonly journal = {
    /** Entries newest first, filtered by path, API key, listener, headers, query, fault and time window. */
    list: async (query: JournalQuery = {}, options?: CallOptions): Promise<JournalEntryView[]> => {
      const call: Call = { method: 'GET', path: '/journal', query: journalParams(query) };
      return (await this.#json<{ entries: JournalEntryView[] }>(call, 'the journal {entries: [...]}', (b) => Array.isArray(b.entries), options)).entries;
    },
    get: (id: string, options?: CallOptions): Promise<JournalEntryView> =>
      this.#json(
        { method: 'GET', path: `/journal/${seg(id)}` },
        'a journal entry {id, path, ...}',
        (b) => typeof b.id === 'string' && typeof b.path === 'string',
        options,
      ),
    clear: (options?: CallOptions): Promise<{ deleted: 'all' }> => this.#json({ method: 'DELETE', path: '/journal' }, DELETED, isDeleted, options),
    /** The audio a client streamed on a socket, as WAV (PCM16 mono at the socket's rate). */
    clientAudio: (id: string, options?: CallOptions): Promise<JournalAudio> => this.#audio(`/journal/${seg(id)}/audio.wav`, options),
    /** The audio an answer carried as hex, in its format (raw PCM as WAV). */
    answerAudio: (id: string, options?: CallOptions): Promise<JournalAudio> => this.#audio(`/journal/${seg(id)}/answer-audio`, options),
  };

  async #audio(path: string, options?: CallOptions): Promise<JournalAudio> {
    const reply = await this.#send({ method: 'GET', path }, options);
    const contentType = reply.headers.get('content-type') ?? 'application/octet-stream';
    if (!/^audio\//i.test(contentType)) {
      throw new ControlClientError(reply.status, `expected audio, got ${contentType} — is this the URL of an emulator?`, reply.text, reply.request, reply.url);
    }
    return { bytes: reply.bytes, contentType };
  }

  // ---- verify ----

  /**
   * Counts the journal entries the matcher selects and checks the count (at least 1 unless said
   * otherwise). When it does not hold, throws a VerificationError whose message lists the nearest misses.
   */
  verify(request: VerifyRequest, options?: CallOptions): Promise<VerifyResult> {
    return this.#json(
      { method: 'POST', path: '/verify', body: request },
      'the verification {ok: true, count, expected}',
      (b) => b.ok === true && typeof b.count === 'number',
      options,
    );
  }

  // ---- tapes ----

  /**
   * Sends every tape of a folder (a path on the emulator's machine) to the emulator again and reports, per tape, where
   * its own answer differs from the recorded one (`POST /_emulator/tapes/check`). Run it on an emulator that neither
   * records nor replays.
   */
  tapesCheck(dir: string, options?: CallOptions): Promise<TapesCheckReport> {
    return this.#json(
      { method: 'POST', path: '/tapes/check', body: { dir } },
      'the tapes check report {summary, tapes, differing, results}',
      (b) => typeof b.summary === 'string' && typeof b.differing === 'number' && Array.isArray(b.results),
      options,
    );
  }

  /**
   * Replays a folder of tapes (a path on the emulator's machine) from now on, as `--replay`: requests that arrive after
   * the answer, HTTP and sockets, are answered from its tapes (`PUT /_emulator/tapes/replay`). `strict` and `speed` are
   * `--replay-strict` and `--replay-speed`. A folder that is not one of tapes, or holds a damaged tape, is a 400 naming
   * the file and what is wrong; an emulator that is recording refuses (409).
   */
  tapesReplay(request: TapesReplayRequest, options?: CallOptions): Promise<TapesView> {
    return this.#json({ method: 'PUT', path: '/tapes/replay', body: request }, TAPES, isTapesView, options);
  }

  /** Stops replaying: the emulator's own answers again (`DELETE /_emulator/tapes/replay`). */
  tapesStopReplay(options?: CallOptions): Promise<TapesView> {
    return this.#json({ method: 'DELETE', path: '/tapes/replay' }, TAPES, isTapesView, options);
  }

  /** The tapes in effect (`GET /_emulator/tapes/replay`): mode `replay`, `record`, `record-missing`, or null. */
  tapesLoaded(options?: CallOptions): Promise<TapesView> {
    return this.#json({ method: 'GET', path: '/tapes/replay' }, TAPES, isTapesView, options);
  }

  // ---- report ----

  /**
   * The latency figures of the journal's audio streams (`GET /_emulator/report`): per operation and
   * for all entries the query selects, time to first audio, turn latency, real-time factor, overrun,
   * time to stop, gaps and stalls, with nearest-rank p50/p95/p99.
   */
  report(query: JournalQuery = {}, options?: CallOptions): Promise<LatencyReport> {
    return this.#json(
      { method: 'GET', path: '/report', query: journalParams(query) },
      'the latency report {all, operations}',
      (b) => typeof b.all === 'object' && b.all !== null && Array.isArray(b.operations),
      options,
    );
  }

  // ---- hear ----

  /**
   * What a listener heard in a recording (`POST /_emulator/hear`): the emulator's syntheses found in
   * it, the words heard with their times, and what differs (gaps, repeats, skips, cuts). WAV, MP3,
   * FLAC and Ogg are told from their first bytes; raw PCM needs `contentType: 'audio/pcm;rate=16000'`.
   */
  async hear(audio: Uint8Array | ArrayBuffer, options: { contentType?: string } & CallOptions = {}): Promise<HearResult> {
    const { contentType, ...call } = options;
    const bytes = audio instanceof Uint8Array ? audio : new Uint8Array(audio);
    const type = contentType ?? sniffAudio(bytes);
    if (!type) {
      throw new TypeError('ControlClient.hear: the audio is not WAV, MP3, FLAC or Ogg by its first bytes: give its contentType (e.g. audio/pcm;rate=16000)');
    }
    return this.#json(
      { method: 'POST', path: '/hear', raw: { bytes, contentType: type } },
      'what was heard {duration_ms, text, utterances, anomalies}',
      (b) => typeof b.text === 'string' && Array.isArray(b.utterances) && Array.isArray(b.anomalies),
      call,
    );
  }

  /** A caller's audio with seeded impairments (`POST /_emulator/speak`); the emulator recognises its text exactly. */
  async speak(request: SpeakRequest, options?: CallOptions): Promise<SpokenAudio> {
    const reply = await this.#send({ method: 'POST', path: '/speak', body: request }, options);
    const contentType = reply.headers.get('content-type') ?? '';
    const impairments = reply.headers.get('x-emulator-impairments');
    if (!/^audio\//i.test(contentType) || !impairments) {
      throw new ControlClientError(
        reply.status,
        `expected audio with X-Emulator-Impairments, got ${contentType || 'no content type'} — is this the URL of an emulator?`,
        reply.text,
        reply.request,
        reply.url,
      );
    }
    return {
      bytes: reply.bytes,
      contentType,
      sampleRate: Number(reply.headers.get('x-audio-sample-rate')),
      durationMs: Number(reply.headers.get('x-audio-duration-ms')),
      signatureId: reply.headers.get('x-emulator-signature') ?? '',
      impairments: JSON.parse(impairments) as SpokenAudio['impairments'],
    };
  }

  // ---- state ----

  /** Accounts with their resources, open sockets and pending timers (a page: `limit`, `cursor`), and totals. */
  state(page: { limit?: number; cursor?: string } & CallOptions = {}): Promise<StateView> {
    const { limit, cursor, ...options } = page;
    return this.#json({ method: 'GET', path: '/state', query: { limit, cursor } }, 'the state {accounts: [...]}', (b) => Array.isArray(b.accounts), options);
  }

  // ---- fixtures ----

  readonly fixtures = {
    list: async (options?: CallOptions): Promise<FixtureView[]> =>
      (
        await this.#json<{ fixtures: FixtureView[] }>(
          { method: 'GET', path: '/fixtures' },
          'the fixtures {fixtures: [...]}',
          (b) => Array.isArray(b.fixtures),
          options,
        )
      ).fixtures,
    get: <N extends FixtureName>(name: N, options?: CallOptions): Promise<FixtureView<N>> =>
      this.#json({ method: 'GET', path: `/fixtures/${seg(name)}` }, FIXTURE, isFixture, options),
    /** Replaces a fixture file now, checked as the start-up files are (a refused one changes nothing). */
    put: <N extends FixtureName>(name: N, content: FixtureContent<N>, options?: CallOptions): Promise<FixtureView<N>> =>
      this.#json({ method: 'PUT', path: `/fixtures/${seg(name)}`, body: content }, FIXTURE, isFixture, options),
  };

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

/** A journal query as URL parameters: headers and query parameters travel as repeated `name:value` parameters. */
function journalParams(query: JournalQuery): Call['query'] {
  const { header, query: params, ...plain } = query;
  const asPairs = (o: Record<string, string> | undefined) => (o ? Object.entries(o).map(([k, v]) => `${k}:${v}`) : undefined);
  return { ...plain, header: asPairs(header), query: asPairs(params) };
}

const CLOCK = 'the clock {now_ms, frozen}';
const isClock = (b: any) => typeof b.now_ms === 'number' && typeof b.frozen === 'boolean';
const ACCOUNT = 'an account {account, balance_micro, ...}';
const isAccount = (b: any) => typeof b.account === 'string' && typeof b.balance_micro === 'number';
const DELETED = 'the deletion {deleted}';
const isDeleted = (b: any) => typeof b.deleted === 'string';
const FIXTURE = 'a fixture {name, source, content}';
const isFixture = (b: any) => typeof b.name === 'string' && 'content' in b;
