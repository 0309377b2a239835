/**
 * A hook that may answer a service's request (HTTP or socket) in the emulator's place: the tapes (src/tapes/) forward
 * it to the real service and record the exchange, or replay a recorded answer. core only names the shape, so it never
 * loads the tapes: an emulator without them has no such hook and its routes run as they always did. The tapes in
 * effect are switched in one place (`TapesSwitch`): at start (`--record`, `--replay`) or at run time by the control
 * plane; every request that arrives after a switch sees the new ones, on every listener and transport.
 */
import { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
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
  /** A socket of a route: answered from the tapes or the upstream, or handed to the route's own handler (`own`). */
  takeSocket(socket: WebSocket, req: FastifyRequest, route: ExchangeSocketRoute, own: SocketHandler): void | Promise<unknown>;
}

/** A socket route as the hook is told of it. */
export interface ExchangeSocketRoute {
  service: 'speech' | 'platform';
  url: string;
}

export type SocketHandler = (socket: WebSocket, req: FastifyRequest) => void | Promise<unknown>;

/** What a folder of tapes is opened for, and how it is played. */
export interface TapesSettings {
  mode: 'record' | 'record-missing' | 'replay';
  dir: string;
  /** Replaying: a request no tape matches is refused instead of answered by the emulator. */
  strict: boolean;
  /** Replayed streams at this multiple of the recorded pace; 0: as fast as they can be written. */
  speed: number;
}

/** A folder of tapes opened, with its hook. */
export interface LoadedTapes {
  readonly hook: ExchangeHook;
  readonly settings: TapesSettings;
  /** How many tapes the folder holds now. */
  tapeCount(): number;
  /** Lets the tapes go (a replaying run writes the ids it used, for `tapes prune`). */
  close(): Promise<void>;
}

/** Opens a folder of tapes with the services' declarations (the composer's, src/app.ts: core never loads the tapes). */
export type TapesOpener = (settings: TapesSettings) => Promise<LoadedTapes>;

/** The tapes in effect, the one place they are switched: the lifecycle reads `hook` for every request. */
export class TapesSwitch {
  current: LoadedTapes | null = null;
  /** Set by the composer; null where nothing can open tapes (an emulator without listeners). */
  opener: TapesOpener | null = null;

  get hook(): ExchangeHook | null {
    return this.current?.hook ?? null;
  }

  /** Opens `settings`' folder (a damaged tape throws, naming it: nothing changes) and puts it in effect for what comes next. */
  async load(settings: TapesSettings): Promise<LoadedTapes> {
    if (!this.opener) throw new Error('this emulator cannot open tapes');
    const next = await this.opener(settings);
    await this.use(next);
    return next;
  }

  /** No tapes any more: the emulator's own rules answer what comes next. */
  unload(): Promise<void> {
    return this.use(null);
  }

  /** Swaps at once (requests under way keep the tapes they started with), then closes the ones replaced. */
  private async use(next: LoadedTapes | null): Promise<void> {
    const before = this.current;
    this.current = next;
    await before?.close();
  }
}

/**
 * Gives a body the hook read back to the route: the request's stream becomes a copy that holds the same bytes
 * (the parsers and the multipart reader read `req.raw`, which Fastify takes as the body's stream once the request's
 * onRequest hooks are done). A body given as a stream (a form the hook kept in a file) is read from it as the route
 * reads the copy.
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
  (req as { raw: IncomingMessage }).raw = copy;
}
