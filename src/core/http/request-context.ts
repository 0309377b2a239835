/**
 * What the request lifecycle knows about one request while it is answered (`req.ctx`): the listener it
 * reached, the account of its key, its fault directive, its journal entry, the matched route and
 * whether admission let it in (or, for a socket route, why not); and the small helpers routes use to read and note it. The stages that
 * fill it are core/http/lifecycle.ts.
 */
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Account, Capability } from '../state/accounts.js';
import type { Refusal } from './refusal.js';
import type { FaultDirective, FaultField } from '../faults/faults.js';
import type { Journal, JournalEntry } from '../journal/journal.js';
import type { EntryListener } from '../journal/entry.js';
import type { Metrics } from './metrics.js';
import { listenerOfRequest } from './listeners.js';

/** Which listener a request reached, by the name its service declares (core/service.ts). Fault rules name it as `service`. */
export type Listener = EntryListener;

export interface RequestContext {
  listener: Listener;
  /** The account of the key the request presented, when valid. */
  account: Account | null;
  /** Why no account: no key, an unknown key (strict mode) or a disabled one. */
  accountProblem: 'missing' | 'invalid' | 'disabled' | null;
  /** Admission let the request in (it runs once per request: core/http/admission.ts). */
  admitted: boolean;
  /** What admission refused a socket route's request with, kept from its preValidation to its socket handler. */
  refusal: Refusal | null;
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
  metrics: Metrics | null;
  metered: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  interface FastifyContextConfig {
    /** Capability the key must carry; a route that names one is admitted by the lifecycle before its body is read. */
    capability?: Capability;
    /** The route checks its key itself (WebSockets with ?api_key=, /mcp with arguments.apiKey). */
    selfAuth?: boolean;
    /** A socket's client messages that have a schema, by name, first one first (the AsyncAPI document reads them). */
    messages?: Record<string, z.ZodType>;
    /** A socket's server events that have a schema, by name (the AsyncAPI document reads them; else a generic event). */
    serverMessages?: Record<string, z.ZodType>;
    /**
     * The route's own rendering of a refusal of admission, for an operation whose errors differ from its
     * service's (speech-to-text answers with real HTTP statuses); the service's renderer otherwise.
     */
    refusal?: (req: FastifyRequest, refusal: Refusal) => Error;
  }
}

export function pathOf(req: FastifyRequest): string {
  const url = req.raw.url ?? req.url;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The listener of a request: its connection's (core/http/listeners.ts), else (an injected request) the service's main one. */
export function listenerOf(req: FastifyRequest, main: Listener): Listener {
  return (listenerOfRequest(req.raw) as Listener | undefined) ?? main;
}

/** Returns the directive's field and marks it as expressed (fields never taken are reported ignored). */
export function takeFault<K extends FaultField>(req: FastifyRequest, field: K): FaultDirective[K] | undefined {
  const value = req.ctx?.fault?.[field];
  if (value !== undefined) (req.ctx.faultUsed ??= new Set()).add(field);
  return value;
}

/**
 * The `X-Emulator-Fault-Ignored` value of a request: fault fields the endpoint never expressed, then
 * why a header could not be read; undefined when there is nothing to report. Replies that bypass the
 * lifecycle's onSend hook (hijacked streams) send it themselves.
 */
export function faultIgnoredHeader(req: FastifyRequest): string | undefined {
  const ctx = req.ctx;
  if (!ctx || (!ctx.fault && !ctx.faultNote)) return undefined;
  const notes: string[] = ctx.fault ? (Object.keys(ctx.fault) as FaultField[]).filter((field) => !ctx.faultUsed?.has(field)) : [];
  if (ctx.faultNote) notes.push(ctx.faultNote);
  return notes.length ? notes.join(', ').replace(/[\r\n]/g, ' ') : undefined;
}

/**
 * Names the spec code of the answer being sent (metrics and the journal's code), and its message (the
 * log line's), so neither need be read back from the serialized body.
 */
export function noteSpecCode(req: FastifyRequest, code: number, message?: string): void {
  req.ctx?.entry?.setCode(code, message);
}

/** Names the account of a request found later than its headers (e.g. /mcp `arguments.apiKey`). */
export function attachAccount(req: FastifyRequest, account: Account): void {
  req.ctx.account = account;
  req.ctx.entry?.setAccount(account.label, account.id);
}

/** Sends a JSON body as-is (already serialized shapes must not be re-serialized by schemas). */
export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}
