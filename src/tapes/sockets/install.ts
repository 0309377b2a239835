/**
 * The socket tapes on a listener's app: each socket route the tapes know (kinds.ts) gets its socket handler wrapped,
 * so that under `--record` its sockets go to the upstream and are taped, and under `--replay` a socket with tapes is
 * answered from them. A socket the admission refused (a fault, a missing key) is the emulator's own, as is every socket
 * without tapes to play: without `--record` and `--replay` nothing is wrapped and the routes run as they always did.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { WebSocket } from 'ws';
import type { Emulator } from '../../core/emulator.js';
import { TapeStore } from '../store.js';
import type { Tape } from '../format.js';
import { answersAccount } from '../match.js';
import { PASS_HEADER, type SocketTapesHost } from './host.js';
import { socketKindOf, type SocketKind } from './kinds.js';
import { scriptOf, type SocketScript } from './match.js';
import { recordSocket } from './record.js';
import { replaySocket } from './replay.js';

/** The tape settings the sockets read (src/config.ts has them). */
export interface SocketTapeSettings {
  record?: string | undefined;
  recordMode: 'record' | 'record-missing';
  recordPerAccount: boolean;
  replay?: string | undefined;
  replayStrict: boolean;
  replaySpeed: number;
  upstreamSpeech?: string | undefined;
  upstreamSpeechBackup?: string | undefined;
  upstreamPlatform?: string | undefined;
}

export interface SocketTapes {
  readonly host: SocketTapesHost;
  /** Replayable socket tapes by socket, in recording order. */
  readonly scripts: Map<string, SocketScript[]>;
}

/** The socket tapes over the running tapes' folder (src/tapes/tapes.ts): the same store, the same used-set. */
export async function openSocketTapes(emu: Emulator, settings: SocketTapeSettings, running: { store: TapeStore; used: Set<string> }): Promise<SocketTapes> {
  const recordMode = settings.replay !== undefined ? null : settings.recordMode;
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
    perAccount: settings.recordPerAccount,
    replaySpeed: settings.replaySpeed,
    strict: settings.replayStrict,
    upstreamOf: (listener) =>
      listener === 'platform'
        ? settings.upstreamPlatform
        : listener === 'speech-backup'
          ? (settings.upstreamSpeechBackup ?? settings.upstreamSpeech)
          : settings.upstreamSpeech,
    recorded: (tape) => {
      if (recordMode === 'record-missing') void add(tape);
    },
    used: (id) => void running.used.add(id),
    pass: randomBytes(16).toString('hex'),
  };
  return { host, scripts };
}

type WsHandler = (socket: WebSocket, req: FastifyRequest) => void | Promise<unknown>;

/**
 * Wraps the socket routes of `service` registered on `app` from now on (call it before the service's routes and its
 * WebSocket plugin are registered: the plugin takes the handler when a route is added).
 */
export function installSocketTapes(app: FastifyInstance, tapes: SocketTapes, service: 'speech' | 'platform'): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const ws = route as unknown as { wsHandler?: WsHandler };
    const own = ws.wsHandler;
    if (!own || typeof route.url !== 'string') return;
    const kind = socketKindOf(service, route.url);
    if (!kind) return;
    ws.wsHandler = (socket, req) => takeSocket(tapes, kind, own, socket, req);
  });
}

function takeSocket(tapes: SocketTapes, kind: SocketKind, own: WsHandler, socket: WebSocket, req: FastifyRequest): void | Promise<unknown> {
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
