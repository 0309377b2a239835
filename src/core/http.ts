import { performance } from 'node:perf_hooks';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Account, Capability } from './accounts.js';
import { accountId, redactKey } from './accounts.js';
import type { Emulator } from './emulator.js';
import { parseFaultHeader, type FaultDirective, type FaultField } from './faults.js';
import { LazyJournalRequest, LazyJournalResponse, entryCode, summarize, type Journal, type JournalEntry } from './journal.js';
import type { Metrics } from './metrics.js';

/** Which listener a request reached. Fault rules name it as `service`. */
export type Listener = 'speech' | 'speech-backup' | 'platform';

export interface RequestState {
  listener: Listener;
  /** The account of the key the request presented, when valid. */
  account: Account | null;
  /** Why no account: no key, an unknown key (strict mode) or a disabled one. */
  accountProblem: 'missing' | 'invalid' | 'disabled' | null;
  fault: FaultDirective | null;
  /** Fault fields the endpoint expressed (made on the first one: most requests carry no fault). */
  faultUsed: Set<FaultField> | null;
  faultNote: string | null;
  entry: JournalEntry | null;
  /** The journal the entry lives in, told when the entry finishes. */
  journal: Journal | null;
  startedAt: number;
  traceId: string | null;
  /**
   * The matched route's pattern and config, noted by a route-level hook: Fastify's `req.routeOptions`
   * builds a new object on every read, a visible share of a cheap answer. Null before routing and for
   * an unknown route.
   */
  route: string | null;
  routeConfig: FastifyContextConfig | null;
  /** Where a finished request is counted; `metered` once it was (an entry may be finished more than once). */
  metrics?: Metrics;
  metered?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    emu: RequestState;
  }
  interface FastifyContextConfig {
    /** Error family of the route (platform): decides codes and HTTP statuses of its errors. */
    family?: string;
    /** Capability the key must carry. */
    capability?: Capability;
    /** The route checks its key itself (WebSockets with ?api_key=, /mcp with arguments.apiKey). */
    selfAuth?: boolean;
    /** Control plane: query parameters the route accepts, whether it reads a body, whether it answers without the token (or with it as `?token=`). */
    control?: { query?: string[]; body?: boolean; public?: boolean; what?: string; tokenInQuery?: boolean };
  }
}

export interface PipelineOptions {
  service: 'speech' | 'platform';
  /** Reads the presented key from a request (bearer header, X-API-Key, ?api_key=…). */
  keyOf(req: FastifyRequest): string | undefined;
}

const CONTROL_PREFIX = '/_emulator';

export function pathOf(req: FastifyRequest): string {
  const url = req.raw.url ?? req.url;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function listenerOf(req: FastifyRequest, service: 'speech' | 'platform'): Listener {
  if (service === 'platform') return 'platform';
  return (req.raw as { emulatorListener?: Listener }).emulatorListener ?? 'speech';
}

/** Returns the directive's field and marks it as expressed (fields never taken are reported ignored). */
export function takeFault<K extends FaultField>(req: FastifyRequest, field: K): FaultDirective[K] | undefined {
  const value = req.emu?.fault?.[field];
  if (value !== undefined) (req.emu.faultUsed ??= new Set()).add(field);
  return value;
}

/**
 * The `X-Emulator-Fault-Ignored` value of a request: fault fields the endpoint never expressed, then
 * why a header could not be read; undefined when there is nothing to report. Replies that bypass the
 * pipeline's onSend hook (hijacked streams) send it themselves.
 */
export function faultIgnoredHeader(req: FastifyRequest): string | undefined {
  const state = req.emu;
  if (!state || (!state.fault && !state.faultNote)) return undefined;
  const notes: string[] = state.fault ? (Object.keys(state.fault) as FaultField[]).filter((field) => !state.faultUsed?.has(field)) : [];
  if (state.faultNote) notes.push(state.faultNote);
  return notes.length ? notes.join(', ').replace(/[\r\n]/g, ' ') : undefined;
}

/**
 * Names the spec code of the answer being sent (metrics and the journal's code column), so it need not
 * be read back from the serialized body.
 */
export function noteSpecCode(req: FastifyRequest, code: number): void {
  if (req.emu?.entry) req.emu.entry.response.code = code;
}

/** Counts one streamed chunk (SSE event, audio chunk) in the journal. */
export function countChunk(req: FastifyRequest): void {
  if (req.emu?.entry) req.emu.entry.chunks = (req.emu.entry.chunks ?? 0) + 1;
}

/** Names the account of a request found later than its headers (e.g. /mcp `arguments.apiKey`). */
export function attachAccount(req: FastifyRequest, account: Account): void {
  req.emu.account = account;
  if (req.emu.entry) {
    req.emu.entry.account = account.label;
    req.emu.entry.accountId = account.id;
  }
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie']);

function journalHeaders(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const s = Array.isArray(v) ? v.join(', ') : String(v);
    out[k] = SECRET_HEADERS.has(k) ? redactSecret(s) : s;
  }
  return out;
}

function redactSecret(value: string): string {
  const m = /^(Bearer\s+)(.*)$/i.exec(value);
  return m ? `${m[1]}${m[2] ? redactKey(m[2]) : ''}` : value ? redactKey(value) : '';
}

function journalQuery(q: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!q || Object.keys(q).length === 0) return undefined;
  return summarize(q, redactKey) as Record<string, unknown>;
}

/** Headers and query of a journal entry as shown (the entry keeps the plain objects until it is read). */
function summarizeRequest(headers: Record<string, unknown>, query: unknown): { headers: Record<string, string>; query?: Record<string, unknown> } {
  return { headers: journalHeaders(headers as FastifyRequest['headers']), query: journalQuery(query as Record<string, unknown> | undefined) };
}

function summarizeBody(body: unknown): unknown {
  return summarize(body, redactKey);
}

/** Keeps a JSON answer for a summary made on first read, where the entry's response allows it (entries a route built itself do not). */
function keepJsonPayload(response: JournalEntry['response'], payload: string): void {
  if (response instanceof LazyJournalResponse) response.keepPayload(payload, jsonSummary);
  else response.summary = jsonSummary(payload);
}

function jsonSummary(payload: string): unknown {
  try {
    return summarize(JSON.parse(payload), redactKey);
  } catch {
    return { bytes: Buffer.byteLength(payload) };
  }
}

/**
 * The request pipeline every service shares: account of the key, fault directive (header or rule),
 * delay, journal entry and one log line. Control-plane routes pass through untouched.
 */
export function installPipeline(app: FastifyInstance, emu: Emulator, opts: PipelineOptions): void {
  app.decorateRequest('emu', null as unknown as RequestState);

  // Every route the service serves, as registered (the property tests cover each one of them); each
  // notes its pattern and config on the request state, after the pipeline's own onRequest made it.
  app.addHook('onRoute', (route) => {
    const ws = route as { websocket?: boolean; wsHandler?: unknown };
    const websocket = ws.websocket === true || typeof ws.wsHandler === 'function';
    for (const method of [route.method].flat()) emu.routes.push({ service: opts.service, method, url: route.url, websocket });
    const url = route.url;
    const config = (route.config ?? {}) as FastifyContextConfig;
    const noteRoute: onRequestHookHandler = (req, _reply, done) => {
      if (req.emu) {
        req.emu.route = url;
        req.emu.routeConfig = config;
      }
      done();
    };
    route.onRequest = [noteRoute, ...[route.onRequest ?? []].flat()];
  });

  // Hooks take Fastify's callback form where they need not wait: no promise per hook on every request.
  app.addHook('onRequest', (req, _reply, done) => {
    const path = pathOf(req);
    const state: RequestState = {
      listener: listenerOf(req, opts.service),
      account: null,
      accountProblem: null,
      fault: null,
      faultUsed: null,
      faultNote: null,
      entry: null,
      journal: emu.journal,
      startedAt: performance.now(),
      traceId: null,
      route: null,
      routeConfig: null,
      metrics: emu.metrics,
    };
    req.emu = state;
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) return done();

    const presented = opts.keyOf(req)?.trim();
    const resolution = emu.accounts.resolve(presented);
    if (resolution.ok) state.account = resolution.account;
    else state.accountProblem = resolution.problem;
    // A refused key (strict mode, disabled) is still named in the journal, so `?account=` finds its requests.
    const journalAccount = state.account ?? (presented ? { id: accountId(presented), label: redactKey(presented) } : null);

    let header: FaultDirective | undefined;
    const raw = req.headers['x-emulator-fault'];
    if (typeof raw === 'string' && raw.trim()) {
      try {
        header = parseFaultHeader(raw);
      } catch (err) {
        state.faultNote = (err as Error).message;
      }
    }
    state.fault = emu.faults.take({ service: state.listener, method: req.method, path, accountId: state.account?.id }, header);

    // One object literal of a fixed shape (the journal names it): this runs on every request. The entry
    // keeps the plain header and query objects only, never the request (and its socket).
    state.entry = emu.journal.start({
      id: '',
      status: null,
      duration_ms: null,
      at_ms: emu.clock.now(),
      service: opts.service,
      method: req.method,
      path,
      account: journalAccount?.label ?? null,
      accountId: journalAccount?.id,
      request: new LazyJournalRequest(req.headers, req.query, summarizeRequest),
      response: new LazyJournalResponse(),
      note: state.listener === 'speech-backup' ? 'backup listener' : undefined,
    });

    const delay = takeFault(req, 'delay_ms');
    // Unref'd: a long delay never keeps the process alive once the listeners have closed.
    if (delay) setTimeout(done, delay).unref();
    else done();
  });

  app.addHook('preHandler', (req, _reply, done) => {
    journalBody(req);
    done();
  });

  // With a data dir, no answer leaves before the changes made so far are on disk (crash-safe acknowledgements).
  if (emu.persistent) {
    app.addHook('onSend', async (_req, _reply, payload) => {
      await emu.persist();
      return payload;
    });
  }

  app.addHook('onSend', (req, reply, payload, done) => {
    const state = req.emu;
    if (!state?.entry) return done(null, payload);
    const ignored = faultIgnoredHeader(req);
    if (ignored !== undefined) reply.header('X-Emulator-Fault-Ignored', ignored);
    const type = String(reply.getHeader('content-type') ?? '');
    state.entry.response.content_type = type || undefined;
    if (typeof payload === 'string') {
      if (type.includes('json') && payload.length < 65_536) keepJsonPayload(state.entry.response, payload);
      else state.entry.response.summary = { bytes: Buffer.byteLength(payload) };
    } else if (Buffer.isBuffer(payload)) state.entry.response.summary = { bytes: payload.length };
    else if (payload) state.entry.response.summary = { stream: true };
    done(null, payload);
  });

  // One info line per request; with info off the line is not even built.
  const logRequests = emu.logger.isLevelEnabled('info');
  app.addHook('onResponse', (req, reply, done) => {
    finishEntry(req, reply.statusCode);
    const state = req.emu;
    if (logRequests && state?.entry) {
      req.log.info(
        { method: req.method, path: state.entry.path, status: reply.statusCode, ms: state.entry.duration_ms, account: state.account?.label ?? null },
        `${req.method} ${state.entry.path} ${reply.statusCode}`,
      );
    }
    done();
  });
}

/**
 * Records the request body in the journal once (the pipeline does it before the handler). A route whose
 * validator words its own errors calls it before validation, so the body is journaled as it arrived,
 * refused or not.
 */
export function journalBody(req: FastifyRequest): void {
  const entry = req.emu?.entry;
  if (!entry || req.body === undefined) return;
  const request = entry.request;
  if (request instanceof LazyJournalRequest) {
    if (request.hasBody) return;
    const body = req.body;
    // A small body is summarized when the journal is read; a large one at once, so the entry never
    // holds a large parsed body.
    if (Number(req.headers['content-length']) <= LAZY_BODY_MAX_BYTES) request.keepBody(body, summarizeBody);
    else request.body = summarize(body, redactKey);
  } else if (request.body === undefined) request.body = summarize(req.body, redactKey);
}

/** Bodies up to this size are kept as parsed until the journal is read. */
const LAZY_BODY_MAX_BYTES = 16 * 1024;

/** Closes a journal entry (also used by WebSocket handlers when the socket ends). */
export function finishEntry(req: FastifyRequest, status: number): void {
  const state = req.emu;
  if (!state?.entry) return;
  if (state.entry.status === null || state.entry.status === 101) state.entry.status = status;
  state.entry.duration_ms = Math.round((performance.now() - state.startedAt) * 100) / 100;
  if (!state.metered) {
    state.metered = true;
    state.metrics?.request(
      {
        service: state.entry.service,
        method: req.method,
        route: state.route ?? '(no route)',
        status: state.entry.status ?? status,
        code: String(entryCode(state.entry) ?? ''),
      },
      state.entry.duration_ms / 1000,
    );
  }
  state.journal?.finished(state.entry);
}

/** Sends a JSON body as-is (already serialized shapes must not be re-serialized by schemas). */
export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}
