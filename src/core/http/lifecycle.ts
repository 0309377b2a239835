/**
 * The request lifecycle every listener shares, as Fastify hooks, in the order they run (the table is
 * docs/architecture.md):
 *   onRequest (app)    pipeline entry: account of the key, fault directive, journal entry, `delay_ms`
 *   onRequest (route)  the matched route noted; admission (core/http/admission.ts) for a route that names a
 *                      capability, before any body is read: a refusal goes to the service's error handler
 *   content parser     body parse (an unreadable body reaches the error handler already admitted)
 *   preValidation      the parsed body journaled, refused or not
 *   validation, handler: the route's schema and rules
 *   onSend             `X-Emulator-Fault-Ignored`, the answer journaled (after persistence, with a data dir)
 *   onResponse         finish (core/http/request-finish.ts): the entry closed, the request counted, one log line
 * Control-plane requests get a context but no entry and no admission; so do the inspector's own
 * downloads and a browser's `GET /` (core/journal/unrecorded.ts). Hooks take Fastify's callback
 * form where they need not wait: no promise per hook on every request.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { z } from 'zod';
import { accountId, redactKey, type Accounts } from '../state/accounts.js';
import type { Clock } from '../state/clock.js';
import { admitRequest, type Refusal } from './admission.js';
import type { ExchangeHook, SocketHandler } from './exchange.js';
import type { InFlight } from './in-flight.js';
import { installDurableAnswers } from './durable-answers.js';
import { parseFaultHeader, type FaultDirective, type Faults } from '../faults/faults.js';
import { JournalEntry, type Journal } from '../journal/journal.js';
import type { Metrics } from './metrics.js';
import { journalAnswer, journalBody, journalRefusedBody, journalRequest, recordFault } from '../journal/summaries.js';
import { faultIgnoredHeader, listenerOf, pathOf, takeFault, type RequestContext } from './request-context.js';
import { finishEntry } from './request-finish.js';
import { identifyRequest } from './request-log.js';
import { unrecorded } from '../journal/unrecorded.js';

/** A route as a service registered it (method, URL pattern, WebSocket or not). */
export interface RegisteredRoute {
  service: 'speech' | 'platform';
  method: string;
  url: string;
  websocket: boolean;
  /** A socket's client messages that have a schema (its route config `messages`). */
  messages?: Record<string, z.ZodType>;
  /** A socket's server events that have a schema (its route config `serverMessages`). */
  serverMessages?: Record<string, z.ZodType>;
}

/** What the lifecycle reads of the emulator instance (core/emulator.ts has all of it). */
export interface LifecycleHost {
  readonly accounts: Accounts;
  readonly clock: Clock;
  readonly faults: Faults;
  readonly journal: Journal;
  readonly metrics: Metrics;
  /** With a data dir, answers wait for their changes to be on disk (durable-answers.ts). */
  readonly persistent: boolean;
  persist(): Promise<void>;
  /** Routes of both services, noted as each is registered. */
  readonly routes: RegisteredRoute[];
  /** Recording or replaying (src/tapes/): the hook that may answer a request in the routes' place; null otherwise. */
  readonly exchanges: ExchangeHook | null;
  /** Requests being answered now, control plane included (a WebSocket is counted by its frames instead). */
  readonly inFlight: InFlight;
}

export interface LifecycleOptions {
  service: 'speech' | 'platform';
  /** Reads the presented key from a request (bearer header, X-API-Key, ?api_key=…). */
  keyOf(req: FastifyRequest): string | undefined;
  /** The service's error for a refusal of admission, in its own shape (thrown to its error handler). */
  refusal(req: FastifyRequest, refusal: Refusal): Error;
}

const CONTROL_PREFIX = '/_emulator';

/** Whether the lifecycle admits a route's requests: it names a capability and does not check its key itself. */
function admittedByLifecycle(config: FastifyContextConfig): boolean {
  return config.capability !== undefined && !config.selfAuth;
}

export function installLifecycle(app: FastifyInstance, emu: LifecycleHost, opts: LifecycleOptions): void {
  app.decorateRequest('ctx', null as unknown as RequestContext);

  // Every route the service serves, as registered (the property tests cover each one of them). Each
  // gets one route-level onRequest hook: it notes the route, then admits the request before its body
  // is read. The config object is the route's own, so a plugin's later onRoute hook that names the
  // capability of its routes (services/speech/reply.ts) is seen here.
  app.addHook('onRoute', (route) => {
    const ws = route as { websocket?: boolean; wsHandler?: unknown };
    const websocket = ws.websocket === true || typeof ws.wsHandler === 'function';
    const url = route.url;
    const config = (route.config ??= {}) as FastifyContextConfig;
    const bodyLimit = route.bodyLimit ?? app.initialConfig.bodyLimit ?? 1_048_576;
    for (const method of [route.method].flat())
      emu.routes.push({ service: opts.service, method, url, websocket, messages: config.messages, serverMessages: config.serverMessages });
    // Recording or replaying (core/http/exchange.ts): a route the tapes' hook covers lets it answer once the request
    // is admitted. The hook is read per request, so tapes loaded or unloaded at run time apply to what comes next.
    const exchange = { service: opts.service, method: [route.method].flat()[0]!, url, bodyLimit };
    const takeExchange = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
      const hook = emu.exchanges;
      if (!hook || !hook.covers(exchange)) return done();
      hook
        .take(req, reply, exchange, (refusal) => (config.refusal ?? opts.refusal)(req, refusal))
        .then(
          (taken) => (taken ? undefined : done()),
          (err: Error) => done(err),
        );
    };
    const enterRoute: onRequestHookHandler = (req, reply, done) => {
      const ctx = req.ctx;
      if (!ctx) return done();
      ctx.route = url;
      ctx.routeConfig = config;
      if (!ctx.entry) return done();
      // Without tapes (the usual case) nothing more than this read is added to the request's path.
      const admitted = emu.exchanges && !websocket ? () => takeExchange(req, reply, done) : done;
      if (!admittedByLifecycle(config)) return admitted();
      // Most requests carry no fault directive and a key that may: they are let in without the
      // admission path's helper objects (the same checks, in the same order: core/http/admission.ts).
      if (!ctx.fault && ctx.account && emu.accounts.has(ctx.account, config.capability!)) {
        ctx.admitted = true;
        return admitted();
      }
      const admission = admitRequest(emu, req, config.capability);
      if (admission.ok) return admitted();
      // Refused before its body was read (the order of checks); the body is still read for the journal, then the refusal answers.
      const refusal = (config.refusal ?? opts.refusal)(req, admission.refusal);
      journalRefusedBody(req, bodyLimit, () => done(refusal));
    };
    route.onRequest = [enterRoute, ...[route.onRequest ?? []].flat()];
    // A socket goes to the tapes' hook when tapes are in effect as it opens (the WebSocket plugin, registered after
    // this hook, takes the handler as it is now).
    const own = ws.wsHandler as SocketHandler | undefined;
    if (typeof own === 'function') {
      const socketRoute = { service: opts.service, url };
      (ws as { wsHandler: SocketHandler }).wsHandler = function (this: unknown, socket, req) {
        const hook = emu.exchanges;
        return hook ? hook.takeSocket(socket, req, socketRoute, own.bind(this)) : own.call(this, socket, req);
      };
    }
  });

  app.addHook('onRequest', (req, reply, done) => {
    const path = pathOf(req);
    // An upgrade's response is never written, so it would never close. (Counted only while the CLI's idle release runs.)
    if (req.headers.upgrade === undefined) emu.inFlight.track(reply.raw);
    const ctx: RequestContext = {
      listener: listenerOf(req, opts.service),
      account: null,
      accountProblem: null,
      admitted: false,
      refusal: null,
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
      metered: false,
    };
    req.ctx = ctx;
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) return done();
    // The inspector's own file fetches and a browser's `GET /`: served, never journaled nor counted.
    if (unrecorded(req, path)) return done();

    const presented = opts.keyOf(req)?.trim();
    const resolution = emu.accounts.resolve(presented);
    if (resolution.ok) ctx.account = resolution.account;
    else ctx.accountProblem = resolution.problem;
    // A refused key (strict mode, disabled) is still named in the journal, so `?account=` finds its requests.
    const journalAccount = ctx.account ?? (presented ? { id: accountId(presented), label: redactKey(presented) } : null);

    let header: FaultDirective | undefined;
    const raw = req.headers['x-emulator-fault'];
    if (typeof raw === 'string' && raw.trim()) {
      const read = parseFaultHeader(raw);
      header = read.directive;
      if (read.problems.length) ctx.faultNote = read.problems.join(', ');
    }
    const taken = emu.faults.take({ service: ctx.listener, method: req.method, path, accountId: ctx.account?.id }, header);
    if (taken) ctx.fault = taken.directive;

    ctx.entry = emu.journal.start(
      new JournalEntry(
        emu.clock.now(),
        opts.service,
        ctx.listener,
        req.method,
        path,
        journalAccount?.label ?? null,
        journalAccount?.id,
        journalRequest(req),
        ctx.listener === 'speech-backup' ? 'backup listener' : undefined,
      ),
    );
    if (taken) recordFault(ctx, taken.directive, taken.origin);
    identifyRequest(req, reply, ctx.entry.id);

    const delay = takeFault(req, 'delay_ms');
    // Unref'd: a long delay never keeps the process alive once the listeners have closed.
    if (delay) setTimeout(done, delay).unref();
    else done();
  });

  // The body as it arrived, before the route's validator words its errors (refused or not).
  app.addHook('preValidation', (req, _reply, done) => {
    journalBody(req);
    done();
  });

  // With a data dir, no answer leaves before the changes made so far are on disk (crash-safe acknowledgements).
  if (emu.persistent) installDurableAnswers(app, emu);

  app.addHook('onSend', (req, reply, payload, done) => {
    const entry = req.ctx?.entry;
    if (!entry) return done(null, payload);
    const ignored = faultIgnoredHeader(req);
    if (ignored !== undefined) reply.header('X-Emulator-Fault-Ignored', ignored);
    journalAnswer(entry, String(reply.getHeader('content-type') ?? ''), payload);
    done(null, payload);
  });

  // The entry closed, the request counted and its one log line written (core/http/request-finish.ts).
  app.addHook('onResponse', (req, reply, done) => {
    finishEntry(req, reply.statusCode);
    done();
  });
}
