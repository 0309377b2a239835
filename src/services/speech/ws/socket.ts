import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Account } from '../../../core/state/accounts.js';
import type { RawData, WebSocket } from 'ws';
import type { z } from 'zod';
import { admitUpgrade, type Admission } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { AUDIO_CHUNK, FINAL_AUDIO_CHUNK } from '../../../core/stream/guard.js';
import { MAX_FRAME_BYTES, openSocketWire } from '../../../core/socket/wire.js';
import { messageBytes } from '../../../core/socket/protocol.js';
import { refusalError, sendSpeechError, SpeechError, traceIdOf } from '../errors.js';
import { speechArea, type SpeechArea } from '../state.js';
import { openSession, type Session } from './model.js';
import { closeCodeFor, event, type EventIds, type SessionPort } from './piece.js';
import { taskContinueSchema, taskStartSchema, WS_PATH } from './schema.js';

/** What a socket's session gets when the upgrade was admitted. */
export interface SocketOpening {
  port: SessionPort;
  account: Account;
  area: SpeechArea;
  ids: EventIds;
  /** Shows a live record of the session as the journal entry's response summary. */
  journal(summary: object): void;
}

/** A socket's protocol: the ids of a new connection, and its session. */
export interface SocketProtocol {
  /** The client messages that have a schema, first one first (the AsyncAPI document reads them). */
  messages: Record<string, z.ZodType>;
  /** The server events that have a schema (the AsyncAPI document reads them). */
  serverMessages?: Record<string, z.ZodType>;
  /** `number` is a fresh 15-digit id from the account's seeded stream; `traceId` the connection's trace. */
  ids(number: string, traceId: string): EventIds;
  open(opening: SocketOpening): SocketSession;
}

export interface SocketSession extends Session {
  /** A client ping (the pong is automatic). */
  onPing?(): void;
}

/**
 * `/ws/v1/t2a_v2` on both speech listeners. Admission runs once, before the upgrade: an injected HTTP
 * `status` refuses the upgrade itself; every other refusal is spoken on the socket (rule 12.2).
 */
export async function speechSocketRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  speechSocketRoute(app, emu, WS_PATH, {
    messages: { task_start: taskStartSchema, task_continue: taskContinueSchema },
    ids: (number, traceId) => ({ sessionId: number, traceId }),
    open: (o) => openSession(emu, o.port, { account: o.account, area: o.area, ...o.ids }),
  });
}

/**
 * A speech socket at `path`: admitted once (core/http/admission.ts `admitUpgrade`), refusals spoken on the
 * socket, then the protocol's session. Over HTTP, in the speech error shape, go an injected `status`
 * (it refuses the upgrade itself) and every refusal of a plain GET, which has no socket to speak on
 * (let in, it gets 426).
 */
export function speechSocketRoute(app: FastifyInstance, emu: Emulator, path: string, protocol: SocketProtocol): void {
  const area = speechArea(emu);
  app.route({
    method: 'GET',
    url: path,
    config: { messages: protocol.messages, ...(protocol.serverMessages ? { serverMessages: protocol.serverMessages } : {}) },
    preValidation: async (req) => {
      const admission = admitUpgrade(emu, req, 'tts');
      if (!admission.ok && (!req.ws || admission.refusal.kind === 'fault_status')) throw refusalError(admission.refusal);
    },
    handler: (req, reply) =>
      sendSpeechError(emu, req, reply, new SpeechError(2013, `invalid params, ${path} is a WebSocket endpoint: connect with an Upgrade request`, 426)),
    wsHandler: (socket, req) => speechSocket(emu, socket, req, admitUpgrade(emu, req, 'tts'), area, protocol),
  });
}

function speechSocket(emu: Emulator, socket: WebSocket, req: FastifyRequest, admission: Admission, area: SpeechArea, protocol: SocketProtocol): void {
  const ids = protocol.ids(sessionIdOf(emu, admission.ok ? admission.account.id : 'anonymous'), traceIdOf(emu, req));
  const oversize = `invalid params, a message is at most ${MAX_FRAME_BYTES} bytes (8 MiB)`;
  const wire = openSocketWire(emu, socket, req, () => wire.sendJson(event('task_failed', ids, 2013, oversize), 'task_failed'), {
    carrier: 'hex',
    latency: emu.config.latency,
  });
  if (!admission.ok) {
    const refusal = admission.refusal;
    if (refusal.kind === 'close_ws') return wire.close(refusal.closeCode, 'injected fault: close_ws');
    if (refusal.kind === 'fault_status') return wire.close(1011, 'injected fault');
    // The same code and text an HTTP request gets (errors.ts), spoken as task_failed.
    const { code, message: msg } = refusalError(refusal);
    wire.sendJson(event('task_failed', ids, code, msg), 'task_failed');
    return wire.close(closeCodeFor(code), msg);
  }
  const port: SessionPort = {
    get signal() {
      return wire.signal;
    },
    get closed() {
      return wire.closed;
    },
    get streamEnded() {
      return wire.streamEnded;
    },
    send: (body, name) => wire.sendJson(body, name),
    sendAudio: (frame, isFinal, stop) => wire.sendAudioFrame(frame, 'task_continued', isFinal ? FINAL_AUDIO_CHUNK : AUDIO_CHUNK, stop),
    beginAnswer: () => wire.beginAnswer(),
    shaping: wire.shaping,
    cancelled: () => wire.cancelled(),
    close: (code, reason) => wire.close(code, reason),
    after: (ms, fn, label) => wire.after(ms, fn, label),
    cancel: (id) => wire.cancel(id),
  };
  const entry = req.ctx?.entry;
  // Attached at once: a client may send task_start before it has read connected_success.
  const session = protocol.open({
    port,
    account: admission.account,
    area,
    ids,
    journal: (summary) => entry?.setAnswerSummary(summary),
  });
  socket.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = messageBytes(data);
    if (isBinary) {
      wire.recordIn(bytes.length, true);
      return session.onBinary();
    }
    const text = bytes.toString('utf8');
    wire.recordIn(bytes.length, false, /"event"\s*:\s*"([^"\\]{1,40})"/.exec(text.slice(0, 400))?.[1], text);
    session.onMessage(text);
  });
  if (session.onPing) socket.on('ping', () => session.onPing!());
  wire.sendJson(event('connected_success', ids), 'connected_success');
}

/** A session id as the service prints them: 15 digits, from the account's seeded stream. */
function sessionIdOf(emu: Emulator, account: string): string {
  return String(100_000_000_000_000 + Math.floor(emu.ids.stream(account).next() * 899_999_999_999_999));
}
