/**
 * The log of every journaled request: one line when it finishes, named by the journal entry's id,
 * which the answer also carries in `X-Emulator-Request-Id` (docs/configuration.md, "Logs"). A socket
 * gets a line when it opens and its request line when it closes (close code, frames in and out).
 *
 * Level: warn for an HTTP status of 5xx and for a connection cut by a fault (`cut_after_chunks`,
 * `close_ws`) or a stream that failed; info otherwise. A spec error answered with HTTP 200 (speech
 * `base_resp.status_code`, platform `error_code`) is info and shows as `code=N`: it is what the client
 * asked to see, not a failure of the emulator. Nothing is built when the level is off.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { entryCode, type JournalEntry } from '../journal/journal.js';
import type { StreamEnd } from '../journal/stream.js';
import { countOf } from './describe.js';

export const REQUEST_ID_HEADER = 'X-Emulator-Request-Id';

/** pino's value of the warn level. */
const WARN = 40;

/** How a socket ended, as its wire saw it. */
export interface SocketClose {
  code: number;
  byClient: boolean;
  framesIn: number;
  framesOut: number;
}

/** What the log reads of a request's stream guard: how it ended and how many chunks left. */
interface StreamState {
  readonly ended: StreamEnd | null;
  readonly chunks: number;
}

/** The stream of each streamed request (a weak map: most requests have none, and no field is added to them). */
const streams = new WeakMap<FastifyRequest, StreamState>();

/** Upgrade requests by their raw request: the 101 answer is written by `ws`, which knows only that. */
const upgrades = new WeakMap<IncomingMessage, string>();

/**
 * Names a journaled request's answer with its entry's id (hijacked streams send the reply's headers
 * too). A WebSocket upgrade gets it on its 101 answer through `requestIdOnUpgrades`.
 */
export function identifyRequest(req: FastifyRequest, reply: FastifyReply, id: string): void {
  reply.header(REQUEST_ID_HEADER, id);
  if (req.raw.headers.upgrade !== undefined) upgrades.set(req.raw, id);
}

/** Adds the request id to every WebSocket handshake answer of an app (its `ws` server's `headers` event). */
export function requestIdOnUpgrades(app: FastifyInstance): void {
  const wss = (app as { websocketServer?: { on(event: 'headers', fn: (headers: string[], req: IncomingMessage) => void): void } }).websocketServer;
  wss?.on('headers', (headers, req) => {
    const id = upgrades.get(req);
    if (id !== undefined) headers.push(`${REQUEST_ID_HEADER}: ${id}`);
  });
}

/** Lets the request's line say how its stream ended (called once by the stream guard of the request). */
export function trackStream(req: FastifyRequest, stream: StreamState): void {
  streams.set(req, stream);
}

/** The fault fields the request expressed, with their values and where the directive came from. */
function faultOf(req: FastifyRequest, entry: JournalEntry): string | undefined {
  const { fault, faultUsed } = req.ctx;
  // An account's standing stream faults: the fields its entry's fault holds.
  if (!fault && entry.fault?.origin === 'account') return `account:${entry.fault.fieldsText()}`;
  if (!fault || !faultUsed || faultUsed.size === 0) return undefined;
  let fields = '';
  // In the directive's own order, whichever stage took each field first.
  for (const field of Object.keys(fault) as (keyof typeof fault)[]) if (faultUsed.has(field)) fields += `${fields ? ',' : ''}${field}=${fault[field]}`;
  // The entry names where the fault came from: `header`, the rule's id, or `account`.
  return `${entry.fault?.origin ?? 'header'}:${fields}`;
}

const STREAM_ENDS: Record<Exclude<StreamEnd, 'done'>, string> = {
  cut: 'stream cut',
  left: 'client left',
  shutdown: 'stream ended by shutdown',
  failed: 'stream failed',
  stalled: 'client stopped reading',
};

function chunksText(n: number): string {
  return countOf(n, 'chunk');
}

/** Who ended a socket: the client, a fault (cut or `close_ws`), the emulator's shutdown, or the server's own rule. */
function closedBy(req: FastifyRequest, close: SocketClose, stream: StreamState | undefined): 'client' | 'fault' | 'shutdown' | 'server' {
  if (stream?.ended === 'cut') return 'fault';
  if (close.byClient) return 'client';
  const ctx = req.ctx;
  if (ctx.faultUsed?.has('close_ws') && ctx.fault?.close_ws === close.code) return 'fault';
  if (stream?.ended === 'shutdown' || close.code === 1001) return 'shutdown';
  return 'server';
}

/**
 * Writes a finished request's line (core/http/request-finish.ts, once per request): a socket's when it
 * closes, with `close`.
 */
export function logRequest(req: FastifyRequest, entry: JournalEntry, status: number, close?: SocketClose): void {
  // Every app is given a pino logger (app.ts), which Fastify types by its smaller interface.
  const log = req.log as Logger;
  // With warnings off (`--log-level silent` or `error`: benchmarks) nothing is looked at; with info
  // off a plain answer builds nothing either.
  if (log.levelVal > WARN) return;
  const stream = streams.get(req);
  const by = close ? closedBy(req, close, stream) : undefined;
  const warn = status >= 500 || by === 'fault' || (!close && (stream?.ended === 'cut' || stream?.ended === 'failed'));
  if (!log.isLevelEnabled(warn ? 'warn' : 'info')) return;

  const code = entryCode(entry);
  const fault = faultOf(req, entry);
  const ms = entry.duration_ms ?? 0;
  let msg = `${entry.method} ${entry.path} ${status}`;
  if (close) msg += ` closed ${close.code} by ${by} in=${close.framesIn} out=${close.framesOut}`;
  const message = code !== undefined && code !== 0 ? entry.response.message : undefined;
  if (code !== undefined && code !== 0) msg += message ? ` code=${code} ${JSON.stringify(message)}` : ` code=${code}`;
  if (stream?.ended && !close)
    msg += stream.ended === 'done' ? ` ${chunksText(stream.chunks)}` : ` ${STREAM_ENDS[stream.ended]} after ${chunksText(stream.chunks)}`;
  if (fault) msg += ` fault=${fault}`;
  msg += ` ${ms}ms ${entry.id}`;

  const fields = {
    listener: req.ctx.listener,
    id: entry.id,
    method: entry.method,
    path: entry.path,
    status,
    code,
    status_msg: message,
    fault,
    ms,
    account: entry.account,
    chunks: stream?.chunks,
    end: stream?.ended ?? undefined,
    close_code: close?.code,
    closed_by: by,
    frames_in: close?.framesIn,
    frames_out: close?.framesOut,
  };
  if (warn) log.warn(fields, msg);
  else log.info(fields, msg);
}

/** A socket's first line, when its upgrade succeeded (its last is its request line, when it closes). */
export function logSocketOpen(req: FastifyRequest): void {
  const log = req.log as Logger;
  const entry = req.ctx?.entry;
  if (!entry || !log.isLevelEnabled('info')) return;
  log.info(
    { listener: req.ctx.listener, id: entry.id, method: entry.method, path: entry.path, status: 101, account: entry.account, event: 'open' },
    `${entry.method} ${entry.path} 101 open ${entry.id}`,
  );
}
