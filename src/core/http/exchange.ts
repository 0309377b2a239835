/**
 * A hook that may answer a service's HTTP request in the emulator's place: the tapes (src/tapes/) forward it to the
 * real service and record the exchange, or replay a recorded answer. core only names the shape, so it never loads
 * the tapes: an emulator started without them has no such hook and its routes run as they always did.
 */
import { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Refusal } from './refusal.js';

/** What the hook is told of a route, once, when the route is registered. */
export interface ExchangeRoute {
  service: 'speech' | 'platform';
  method: string;
  /** The route's pattern (`/v1/files/:file_id`): with the method, the operation. */
  url: string;
  /** The route's own body limit (bytes): a body the hook reads past it is the service's own 413. */
  bodyLimit: number;
}

export interface ExchangeHook {
  /** Whether the route's requests go through the hook at all (decided once per route). */
  covers(route: ExchangeRoute): boolean;
  /**
   * Answers the request itself (the reply is sent or taken over): true. False: the emulator's own route answers (a
   * hook that read the body gives it back first: `giveBodyBack`).
   * `refuse` renders a refusal in the operation's own error shape (an unreachable upstream, a strict miss); the hook
   * throws what it returns.
   */
  take(req: FastifyRequest, reply: FastifyReply, route: ExchangeRoute, refuse: (refusal: Refusal) => Error): Promise<boolean>;
}

/** Requests whose body a hook read and gave back: their body is read again from the copy. */
const givenBack = new WeakSet<IncomingMessage>();

/**
 * Gives a body the hook read back to the route: the request's stream becomes a copy that holds the same bytes
 * (the parsers and the multipart reader read `req.raw`; the lifecycle's preParsing hands the copy on). A body given
 * as a stream (a form the hook kept in a file) is read from it as the route reads the copy.
 */
export function giveBodyBack(req: FastifyRequest, body: Buffer | Readable): void {
  const raw = req.raw;
  const copy = new IncomingMessage(raw.socket);
  copy.headers = raw.headers;
  copy.rawHeaders = raw.rawHeaders;
  copy.method = raw.method;
  copy.url = raw.url;
  copy.httpVersion = raw.httpVersion;
  copy.httpVersionMajor = raw.httpVersionMajor;
  copy.httpVersionMinor = raw.httpVersionMinor;
  copy.complete = true;
  if (Buffer.isBuffer(body)) {
    if (body.length) copy.push(body);
    copy.push(null);
  } else {
    copy._read = () => void body.resume();
    body.on('data', (chunk: Buffer) => {
      if (!copy.push(chunk)) body.pause();
    });
    body.once('end', () => copy.push(null));
    body.once('error', (err) => copy.destroy(err));
    body.pause();
  }
  givenBack.add(copy);
  (req as { raw: IncomingMessage }).raw = copy;
}

/** The payload the body parser reads: the copy of a body given back, else the request's own. */
export function payloadOf<P>(req: FastifyRequest, payload: P): P | IncomingMessage {
  return givenBack.has(req.raw) ? req.raw : payload;
}
