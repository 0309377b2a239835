/**
 * The socket tapes: a socket of a route the tapes know (kinds.ts) that opens while tapes are in effect comes here
 * (the lifecycle hands it over: core/http/exchange.ts), so that under `--record` it goes to the upstream and is taped,
 * and under `--replay` a socket with tapes is answered from them. A socket the admission refused (a fault, a missing
 * key) is the emulator's own, as is every socket without tapes to play.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Emulator } from '../../core/emulator.js';
import type { ExchangeSocketRoute, SocketHandler } from '../../core/http/exchange.js';
import type { TapesOptions } from '../context.js';
import { TapeStore } from '../store.js';
import type { Tape } from '../format.js';
import { answersAccount } from '../match.js';
import { PASS_HEADER, type SocketTapesHost } from './host.js';
import { socketKindOf } from './kinds.js';
import { scriptOf, type SocketScript } from './match.js';
import { recordSocket } from './record.js';
import { replaySocket } from './replay.js';

export interface SocketTapes {
  readonly host: SocketTapesHost;
  /** Replayable socket tapes by socket, in recording order. */
  readonly scripts: Map<string, SocketScript[]>;
}

/** The socket tapes over the running tapes' folder (src/tapes/tapes.ts): the same store, the same used-set. */
export async function openSocketTapes(emu: Emulator, options: TapesOptions, running: { store: TapeStore; used: Set<string> }): Promise<SocketTapes> {
  const recordMode = options.mode === 'replay' ? null : options.mode;
  const store = running.store;
  const recordStore = recordMode ? store : null;
  const replayStore = recordMode === 'record' ? null : store;
  const scripts = new Map<string, SocketScript[]>();
  const add = async (tape: Tape) => {
    const kind = socketKindOf(tape.service, tape.request.path);
    if (!kind || tape.answer.stream?.kind !== 'socket' || !replayStore) return;
    const list = (scripts.get(kind.name) ?? []).filter((s) => s.tape.id !== tape.id);
    list.push(await scriptOf(replayStore, kind, tape));
    list.sort((a, b) => a.tape.seq - b.tape.seq || a.tape.id.localeCompare(b.tape.id));
    scripts.set(kind.name, list);
  };
  for (const tape of replayStore?.tapes.values() ?? []) await add(tape);
  const host: SocketTapesHost = {
    emu,
    recordStore,
    replayStore,
    recordMode,
    perAccount: options.perAccount,
    replaySpeed: options.speed,
    strict: options.strict,
    upstreamOf: (listener) =>
      listener === 'platform'
        ? options.upstreams.platform
        : listener === 'speech-backup'
          ? (options.upstreams['speech-backup'] ?? options.upstreams.speech)
          : options.upstreams.speech,
    recorded: (tape) => {
      if (recordMode === 'record-missing') void add(tape);
    },
    used: (id) => void running.used.add(id),
    pass: randomBytes(16).toString('hex'),
  };
  return { host, scripts };
}

/** A socket that opened while these tapes are in effect: replayed, recorded, or the route's own (`own`). */
export function takeSocket(
  tapes: SocketTapes,
  route: ExchangeSocketRoute,
  own: SocketHandler,
  socket: WebSocket,
  req: FastifyRequest,
): void | Promise<unknown> {
  const kind = socketKindOf(route.service, route.url);
  if (!kind) return own(socket, req);
  const { host } = tapes;
  // A fall-through's own connection, and every socket the admission refused: the emulator's own answer.
  if (req.headers[PASS_HEADER] === host.pass || req.ctx?.refusal) return own(socket, req);
  const account = req.ctx?.account?.id ?? null;
  const scripts = (tapes.scripts.get(kind.name) ?? []).filter((s) => answersAccount(s.tape, account));
  if (host.replayStore && scripts.length && host.recordMode !== 'record') return replaySocket(host, host.replayStore, kind, scripts, socket, req);
  const upstream = host.recordMode ? host.upstreamOf(req.ctx?.listener ?? kind.service) : undefined;
  if (upstream && host.recordStore) return recordSocket(host, kind, socket, req, upstream);
  return own(socket, req);
}
