/**
 * The listeners of one service: one HTTP server per listener it declares, every one in front of the service's one
 * app. Each applies the listener limits, answers CONNECT and unreadable requests in the service's shape, and names
 * its connections, so a request knows the listener it reached (`listenerOf`) without a mark on the request itself.
 * WebSocket upgrades of the other listeners reach the app's socket routes through the main one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { applyListenerLimits, refuseOverCap, type BusyAnswer, type ListenerLimits } from './listener-limits.js';
import { connectHandler, parserErrorHandler } from './parser-errors.js';

/**
 * How much longer than the advertised keep-alive timeout (`Keep-Alive: timeout=N`) an idle connection is really held.
 * A client closes an idle connection on its own clock before the advertised time (undici: 2 s before, counted in
 * timer ticks of about half a second that fall behind wall time whenever its process is blocked). A test process that
 * blocks for seconds (building a large upload, a synchronous decode) on a busy machine would otherwise send its next
 * request on a connection the listener closes at once: a reset instead of an answer. Node 24.6 and later honour it.
 */
const KEEP_ALIVE_GRACE_MS = 60_000;

/** The listener each open connection reached: named once per connection, read by every request on it. */
const listenerOfSocket = new WeakMap<Socket, string>();

/** The name of the listener a request reached (its connection's). */
export function listenerOfRequest(req: IncomingMessage): string | undefined {
  return listenerOfSocket.get(req.socket);
}

export interface ListenerAnswers {
  /** A URL the router cannot read, a request the HTTP parser refuses, a CONNECT. */
  badUrl: BusyAnswer;
  /** A request over the connection cap. */
  busy: BusyAnswer;
}

/**
 * The servers of a service's listeners, in the order declared, around the app's request handler. The first is the
 * one the app owns (its factory's answer: Fastify adds its own parser-error handler to it); the others get theirs here.
 */
export function listenerServers(
  names: readonly [string, ...string[]],
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ListenerLimits,
  answers: ListenerAnswers,
  keepAliveTimeoutMs?: number,
): [Server, ...Server[]] {
  const servers = names.map((name, i) => {
    const server = createServer({ requireHostHeader: false }, refuseOverCap(handler, limits, answers.busy, answers.badUrl));
    server.on('connection', (socket: Socket) => listenerOfSocket.set(socket, name));
    if (i > 0) server.on('clientError', parserErrorHandler(answers.badUrl));
    applyListenerLimits(server, limits, answers.busy);
    server.on('connect', connectHandler(answers.badUrl));
    if (keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = keepAliveTimeoutMs;
    server.keepAliveTimeoutBuffer = KEEP_ALIVE_GRACE_MS;
    return server;
  }) as [Server, ...Server[]];
  const [main, ...others] = servers;
  for (const other of others) other.on('upgrade', (req: IncomingMessage, socket, head) => main.emit('upgrade', req, socket, head));
  return servers;
}
