/**
 * The tapes of a running emulator: the hook (core/http/exchange.ts) that records each exchange with the real
 * service (`record`), replays recorded answers (`replay`), or both (`record-missing`), over HTTP and on sockets.
 * Loaded only when tapes are opened (`--record`, `--replay`, or the control plane's replay route); the request path of
 * an emulator without them never sees it.
 */
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import type { ExchangeHook, ExchangeRoute, LoadedTapes } from '../core/http/exchange.js';
import { giveBodyBack } from '../core/http/exchange.js';
import type { Refusal } from '../core/http/refusal.js';
import { journalBody, journalBodyText } from '../core/journal/summaries.js';
import { hashOnly } from './body.js';
import type { Tape, TapeRequest } from './format.js';
import { FreshValues } from './fresh.js';
import { declarationOf, matchKey, missMessage, TapeIndex, type MatchKey } from './match.js';
import { forwardAndRecord, TapeWriteError } from './recorder.js';
import { StorageError } from '../core/state/storage.js';
import { replayTape } from './replayer.js';
import { isMultipart, StreamedBody, streamedTapeRequest } from './multipart.js';
import { bodyLimitOf, readRawBody, tapeRequestOf } from './request.js';
import { TapeStore } from './store.js';
import { Upstream } from './upstream.js';
import { keyText, type TapesContext, type TapesOptions } from './context.js';
import { openSocketTapes, takeSocket } from './sockets/install.js';

export type { TapesOptions } from './context.js';

/** One request as the tapes see it: the operation, the request as a tape holds it (files hashed only), its key. */
interface Arrived {
  operation: string;
  /** Its bytes, or a multipart form streamed through a temporary file (never held whole). */
  body: Buffer | StreamedBody;
  request: TapeRequest;
  key: MatchKey;
}

export interface RunningTapes extends LoadedTapes {
  store: TapeStore;
  /** The tapes answered in this run (the sockets' tapes add theirs: src/tapes/sockets/). */
  used: Set<string>;
  /** Writes the used-set of a replaying run (`tapes prune` reads it) and lets the upstream connections go. */
  close(): Promise<void>;
}

/**
 * The tapes each folder answered in this emulator's life, by the folder's full path: a folder loaded again (a second
 * `PUT` of the control plane, a suite putting its run's tapes back) goes on with its list, so its `.used.json` holds
 * every tape the run used, not only those since the last load (`tapes prune` would drop the others).
 */
const usedByEmulator = new WeakMap<Emulator, Map<string, Set<string>>>();

function usedOf(emu: Emulator, dir: string): Set<string> {
  let folders = usedByEmulator.get(emu);
  if (!folders) usedByEmulator.set(emu, (folders = new Map()));
  const key = resolve(dir);
  let used = folders.get(key);
  if (!used) folders.set(key, (used = new Set()));
  return used;
}

/**
 * The fresh values of this emulator's life, across every load: a trace id is never handed out twice in a run, and an
 * id replayed before a folder was loaded again (a `file_id` a client kept) still stands for its recorded one.
 */
const freshByEmulator = new WeakMap<Emulator, FreshValues>();

function freshOf(emu: Emulator): FreshValues {
  let fresh = freshByEmulator.get(emu);
  if (!fresh) freshByEmulator.set(emu, (fresh = new FreshValues(emu.config.seed)));
  return fresh;
}

/** Opens the folder (every tape read and checked: a damaged one is refused, named) and makes the hook. */
export async function openTapes(emu: Emulator, options: TapesOptions): Promise<RunningTapes> {
  const store = await TapeStore.open(options.dir, { create: options.mode !== 'replay' });
  const used = usedOf(emu, options.dir);
  const sockets = await openSocketTapes(emu, options, { store, used });
  const ctx: TapesContext = {
    emu,
    options,
    store,
    index: new TapeIndex(store.tapes.values(), (s) => options.declarations[s]),
    fresh: freshOf(emu),
    upstream: new Upstream(),
    used,
    recordedTimes: new Map(),
    replayedTimes: new Map(),
  };
  const hook: ExchangeHook = {
    covers: (route) => !route.url.startsWith('/download/') && route.url !== '/' && !route.url.startsWith('/_emulator'),
    take: (req, reply, route, refuse) => take(ctx, req, reply, route, refuse),
    takeSocket: (socket, req, route, own) => takeSocket(sockets, route, own, socket, req),
  };
  return {
    hook,
    settings: { mode: options.mode, dir: options.dir, strict: options.strict, speed: options.speed },
    tapeCount: () => store.count,
    store,
    used,
    close: async () => {
      // A socket's tape still being assembled is written whole before the folder is let go.
      await store.settled();
      ctx.upstream.close();
      // Only a folder that holds tapes gets the list: a folder named by mistake (empty, or not one of tapes) is left as it was.
      if (options.mode !== 'record' && store.count > 0)
        await store.writeUsed(ctx.used).catch((err: Error) => emu.logger.error({ err }, 'tapes: the used-set could not be written'));
    },
  };
}

function upstreamOf(ctx: TapesContext, listener: string): string | undefined {
  const u = ctx.options.upstreams;
  if (listener === 'speech-backup') return u['speech-backup'] ?? u.speech;
  return listener === 'platform' ? u.platform : u.speech;
}

/**
 * The request's body: read whole within its route's limit, or a multipart form streamed to a temporary file (passed on
 * to the upstream as it arrives when `forward`): beside the tapes while recording, in the system's temporary folder
 * when only replaying (the tapes' folder may be read-only).
 */
function bodyOf(ctx: TapesContext, req: FastifyRequest, route: ExchangeRoute, forward: boolean): Promise<Buffer> | StreamedBody {
  const limit = bodyLimitOf(req.raw, route.bodyLimit);
  if (!isMultipart(req.raw)) return readRawBody(req.raw, limit);
  return new StreamedBody(req.raw, limit, ctx.options.mode === 'replay' ? tmpdir() : ctx.store.dir, { forward });
}

async function arrive(ctx: TapesContext, req: FastifyRequest, route: ExchangeRoute): Promise<Arrived> {
  const operation = `${route.method} ${route.url}`;
  const read = bodyOf(ctx, req, route, false);
  const body = read instanceof StreamedBody ? read : await read;
  let recorded: TapeRequest;
  try {
    recorded = body instanceof StreamedBody ? await streamedTapeRequest(req.raw, body, null) : await tapeRequestOf(req.raw, body, hashOnly);
  } catch (err) {
    if (body instanceof StreamedBody) await body.remove();
    throw err;
  }
  // A fresh id handed out by an earlier replay is matched as the recorded id it stands for.
  const request: TapeRequest = {
    ...recorded,
    path: ctx.fresh.mapPath(recorded.path),
    query: ctx.fresh.mapBack(recorded.query) as TapeRequest['query'],
    body: 'json' in recorded.body ? { json: ctx.fresh.mapBack(recorded.body.json) } : recorded.body,
  };
  const declaration = declarationOf(ctx.options.declarations[route.service], operation);
  const key = matchKey(route.service, operation, req.ctx.account?.id ?? null, request, declaration);
  journalArrived(req, body);
  return { operation, body, request, key };
}

/** The journal keeps the body as the lifecycle would have (its parsers never ran). */
function journalArrived(req: FastifyRequest, body: Buffer | StreamedBody): void {
  const type = req.headers['content-type'] ?? '';
  if (Buffer.isBuffer(body) && /json|^text\/|x-www-form-urlencoded/i.test(type) && body.length) journalBodyText(req, body.toString('utf8'));
  else journalBody(req);
}

async function take(ctx: TapesContext, req: FastifyRequest, reply: FastifyReply, route: ExchangeRoute, refuse: (r: Refusal) => Error): Promise<boolean> {
  const mode = ctx.options.mode;
  const upstream = upstreamOf(ctx, req.ctx.listener);
  // Recording a service without an upstream: the emulator answers it, untouched.
  if (mode === 'record' && !upstream) return false;
  if (mode === 'record') {
    // Always forwarded: nothing to match, the body goes on at once (a form as it arrives; the tape is made once the
    // answer is whole).
    const read = bodyOf(ctx, req, route, true);
    const body = read instanceof StreamedBody ? read : await read;
    journalArrived(req, body);
    await forwardAndRecord(ctx, req, reply, { service: route.service, operation: `${route.method} ${route.url}`, body, upstream: upstream! }, refuse).catch(
      (err: unknown) => tapeProblem(ctx, err),
    );
    return true;
  }
  const arrived = await arrive(ctx, req, route);
  const found = ctx.index.lookup(arrived.key);
  if (found.hit) {
    const text = keyText(arrived.key);
    const n = (ctx.replayedTimes.get(text) ?? 0) + 1;
    ctx.replayedTimes.set(text, n);
    const tape: Tape = found.hit[Math.min(n, found.hit.length) - 1]!.tape;
    ctx.used.add(tape.id);
    if (arrived.body instanceof StreamedBody) await arrived.body.remove();
    await replayTape(ctx, req, reply, tape, declarationOf(ctx.options.declarations[route.service], arrived.operation), arrived.request);
    return true;
  }
  if (mode === 'replay' || !upstream) {
    req.ctx.entry?.noteTape({ mode: 'missed', nearest: found.nearest });
    const body = arrived.body;
    // No recorded answer is the family's "not found" (404 in its own shape), never an unlisted 500.
    if (ctx.options.strict) {
      if (body instanceof StreamedBody) await body.remove();
      throw refuse({ kind: 'upstream', status: 404, message: `replay: ${missMessage(arrived.operation, found.nearest)}` });
    }
    if (body instanceof StreamedBody) {
      // The emulator's own route reads the form from its file, as it streams; the file goes once it was read.
      const bytes = body.bytes();
      bytes.once('close', () => void body.remove());
      giveBodyBack(req, bytes);
    } else giveBodyBack(req, body);
    return false;
  }
  await forwardAndRecord(ctx, req, reply, { service: route.service, operation: arrived.operation, body: arrived.body, upstream: upstream! }, refuse).catch(
    (err: unknown) => tapeProblem(ctx, err),
  );
  return true;
}

/**
 * A tape that could not be written (a full disk) is told as a tape problem in the log, and the client gets the
 * operation's internal error saying so (the data dir's failure, as for the emulator's own state): never a bare
 * "handler failed".
 */
function tapeProblem(ctx: TapesContext, err: unknown): never {
  if (!(err instanceof TapeWriteError)) throw err;
  ctx.emu.logger.error({ err: err.cause }, 'tapes: a tape could not be written');
  throw new StorageError(`${err.message}; the exchange was not kept`, (err.cause as NodeJS.ErrnoException).code);
}
