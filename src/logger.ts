import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { PrettyOptions } from 'pino-pretty';
import { sourceStack } from './source-stack.js';

/**
 * A request as logs show it: the path without its query, since `?api_key=` carries a full key.
 * (The pipeline writes its own line per request; this guards any other line that names a request.)
 */
function requestForLogs(req: { method?: string; url?: string }) {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return { method: req.method, path: q === -1 ? url : url.slice(0, q) };
}

/** An error as logs show it: pino's own form, with the frames of the built bundle named by their sources. */
function errorForLogs(err: Error): Record<string, unknown> {
  const out = pino.stdSerializers.err(err) as unknown as Record<string, unknown> | null;
  // Anything not like an Error (null, a string) comes back as it is: only a serialized error has a stack to name.
  if (typeof out === 'object' && out !== null && typeof out.stack === 'string') out.stack = sourceStack(out.stack);
  return out as Record<string, unknown>;
}

/** Options shared by every logger of the emulator (also used by tests that capture lines). */
export function loggerOptions(level: string): LoggerOptions {
  return { level, base: undefined, serializers: { req: requestForLogs, err: errorForLogs } };
}

/**
 * The fields of a request's line (core/http/request-log.ts). Its message already says all of them but the
 * account, so the pretty form shows them once, on the message's line; the JSON form keeps them as fields.
 */
const REQUEST_FIELDS = [
  'listener',
  'id',
  'method',
  'path',
  'status',
  'code',
  'status_msg',
  'fault',
  'ms',
  'account',
  'chunks',
  'end',
  'event',
  'close_code',
  'closed_by',
  'frames_in',
  'frames_out',
] as const;

/** Width of the longest listener name (`speech-backup`): messages start in one column. */
const WHO_WIDTH = 13;

/**
 * One line per request in a terminal: `[12:00:01.234] INFO: speech        POST /v1/t2a_v2 200 code=1002 …`.
 * Another line (start-up, a failure) keeps its own fields: those the request line hides are added to
 * its message as `key=value`, and the rest (an error's stack) follow as pino-pretty prints them.
 */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const who = log.listener ?? log.service;
  let msg = who === undefined ? String(log[messageKey] ?? '') : `${String(who).padEnd(WHO_WIDTH)} ${String(log[messageKey] ?? '')}`;
  if (log.id !== undefined && log.listener !== undefined) {
    if (log.account) msg += ` account=${String(log.account)}`;
    return msg;
  }
  for (const key of REQUEST_FIELDS)
    if (log[key] !== undefined && key !== 'listener') msg += ` ${key}=${typeof log[key] === 'object' ? JSON.stringify(log[key]) : String(log[key])}`;
  return msg;
}

/** pino-pretty's options for the emulator's lines (exported for tests that capture them). */
export function prettyOptions(destination?: DestinationStream): PrettyOptions {
  return {
    translateTime: 'HH:MM:ss.l',
    ignore: ['pid', 'hostname', 'reqId', 'service', ...REQUEST_FIELDS].join(','),
    messageFormat: prettyMessage,
    singleLine: true,
    // Written as it comes, like any terminal output: no line is lost when the process exits.
    sync: true,
    ...(destination ? { destination } : {}),
  };
}

/**
 * Pretty lines in a terminal, JSON lines otherwise (CI, Docker, files). The pretty form is made in
 * this thread: its message format is a function, which a worker transport cannot be handed. It is
 * loaded only then (start-up time).
 */
export function createLogger(level: string, isPretty = Boolean(process.stdout.isTTY)): Logger {
  if (isPretty && level !== 'silent') {
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pino(loggerOptions(level), pretty(prettyOptions()));
  }
  return pino(loggerOptions(level));
}
