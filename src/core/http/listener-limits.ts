/**
 * Limits every listener applies to its connections, whatever the service behind it:
 * - a body timeout: a request (headers and body) not received whole within it is answered 408 in the
 *   listener's shape (by the `clientError` handler) and its connection closed, so a stalled upload
 *   never holds a descriptor for ever;
 * - a cap on open connections: a request arriving on a connection over the cap is answered 503 in the
 *   listener's shape and its connection closed; a connection over the cap that sends nothing is
 *   closed after a short grace, so a flood of idle connections cannot exhaust the descriptors.
 * Both are transport rules on wall time, like the pacing of delivery.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { requireHost } from './parser-errors.js';

export interface ListenerLimits {
  bodyTimeoutMs: number;
  maxConnections: number;
}

/** An answer made before any route runs, in the listener's shape. */
export interface EarlyAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** The answer to a request refused for the connection cap, in the listener's shape. */
export type BusyAnswer = (message: string, url?: string) => EarlyAnswer;

/** How long a connection over the cap may stay open without sending a request. */
const OVER_CAP_GRACE_MS = 2000;

/** Connections over the cap that still get their 503; beyond them Node drops new connections at once. */
const OVER_CAP_ANSWERED = 1024;

const overCap = new WeakSet<Socket>();

function busyMessage(limits: ListenerLimits): string {
  return `the listener holds its maximum of ${limits.maxConnections} open connections; retry on a new connection later`;
}

/** Applies the body timeout, counts connections and refuses upgrades over the cap; call before listen(). */
export function applyListenerLimits(server: Server, limits: ListenerLimits, busy: BusyAnswer): void {
  server.requestTimeout = limits.bodyTimeoutMs;
  server.headersTimeout = Math.min(server.headersTimeout || limits.bodyTimeoutMs, limits.bodyTimeoutMs);
  // Node checks the timeouts on this interval (read when the server starts listening).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    100,
    Math.min(30_000, Math.floor(limits.bodyTimeoutMs / 4)),
  );
  // The hard ceiling: a flood beyond it is refused by closing at accept, so descriptors never run out.
  server.maxConnections = limits.maxConnections + OVER_CAP_ANSWERED;
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    if (open <= limits.maxConnections) return;
    overCap.add(socket);
    const grace = setTimeout(() => socket.destroy(), OVER_CAP_GRACE_MS).unref();
    socket.once('close', () => clearTimeout(grace));
  });
  // Runs before the WebSocket handler, which leaves a socket that is no longer writable alone.
  server.prependListener('upgrade', (req: IncomingMessage, socket: Socket) => {
    if (!overCap.has(socket)) return;
    const answer = busy(busyMessage(limits), req.url);
    const body = JSON.stringify(answer.body);
    const head = Object.entries({
      ...answer.headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Service Unavailable'}\r\n${head}\r\n${body}`);
  });
}

/** Wraps a request handler: a request on a connection over the cap gets the busy answer instead; one without Host a 400. */
export function refuseOverCap(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ListenerLimits,
  busy: BusyAnswer,
  badRequest: BusyAnswer,
): (req: IncomingMessage, res: ServerResponse) => void {
  const served = requireHost(handler, badRequest);
  return (req, res) => {
    if (!overCap.has(req.socket)) return served(req, res);
    const answer = busy(busyMessage(limits), req.url);
    const body = JSON.stringify(answer.body);
    res.shouldKeepAlive = false;
    res.writeHead(answer.status, {
      ...answer.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': '1',
      connection: 'close',
    });
    res.end(body);
    // The body is not read: the connection closes after the answer.
    req.resume();
  };
}
