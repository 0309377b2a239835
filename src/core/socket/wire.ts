/**
 * The plumbing every WebSocket of the emulator shares: JSON events and binary audio out (journaled), the open
 * socket registry, clock timers and clean-up hooks that run once when the socket closes for any reason
 * (client close, abrupt disconnect, server close, reset). Chunks of a stream (audio, results) leave
 * through the socket's stream guard (core/stream/guard.ts), which counts them and applies its faults.
 * The idle rule is core/socket/idle.ts; protocol errors, message bytes and close codes core/socket/protocol.ts.
 */
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { Clock } from '../state/clock.js';
import type { Journal } from '../journal/journal.js';
import type { Sockets } from './open-sockets.js';
import { sendableCloseCode, truncateUtf8 } from './protocol.js';
import { pathOf } from '../http/request-context.js';
import { finishEntry } from '../http/request-finish.js';
import type { WsFrameSummary } from '../journal/journal.js';
import { logSocketOpen } from '../http/request-log.js';
import { AUDIO_CHUNK, type AudioFrame, type AudioShaping, type FrameKind, type StreamEnd } from '../stream/guard.js';
import { guardStream } from '../stream/request-guard.js';
import type { AudioCarrier } from '../stream/shaping.js';
import { sendEncoded, type EncodedFrames } from '../stream/encoded.js';

/** What a socket's wire reads of the emulator instance (core/emulator.ts has all of it). */
export interface SocketHost {
  readonly clock: Clock;
  readonly journal: Journal;
  readonly logger: Logger;
  readonly sockets: Sockets;
  /** Aborted when the emulator begins to close. */
  readonly closing: AbortSignal;
  /** The commit a frame must wait for, or null. */
  pendingCommit(): Promise<void> | null;
  /** How long a client may leave over SOCKET_BUFFER_BYTES unread before its socket closes (`--socket-stall-ms`). */
  readonly config: { readonly socketStallMs: number };
}

export interface SocketWire {
  readonly signal: AbortSignal;
  readonly closed: boolean;
  /** How the socket's stream ended when its guard ended it (`cut` by the fault, client `left`…); null while open. */
  readonly streamEnded: StreamEnd | null;
  /**
   * Sends one JSON text frame; `event` names it in the journal. With a `kind`, the frame is a chunk of
   * the socket's stream and goes through its guard: false once the stream ended (gone, or cut by a fault).
   */
  sendJson(body: object, event?: string, kind?: FrameKind): boolean;
  /** Sends one binary audio frame through the guard; false when the socket is gone (or was cut by a fault). */
  sendAudio(chunk: Buffer): boolean;
  /**
   * Sends a frame as another server wrote it (a recorded upstream's, src/tapes/sockets/): text as is, journaled with
   * its JSON when it has one; outside the guard (the upstream's own answer, neither paced nor damaged here).
   */
  relay(data: Buffer, binary: boolean): boolean;
  /**
   * Sends one JSON message of synthesized audio through the guard, which paces it and applies the faults
   * inside its audio (a promise while a paced frame waits); `stop` ends such a wait for this frame only.
   */
  sendAudioFrame(frame: AudioFrame<object>, event: string, kind: FrameKind, stop?: AbortSignal): boolean | Promise<boolean>;
  /**
   * Sends every chunk an encoder makes as audio frames through the guard, in one call (core/stream/encoded.ts):
   * true once the encoder ended with every frame sent, false once the socket's stream ended.
   */
  sendEncodedAudio(chunks: AsyncIterable<Buffer>, how: EncodedFrames<object | Buffer>, event: string): Promise<boolean>;
  /** When the current answer's first audio frame left (wall time, performance.now); null until it did. */
  readonly firstAudioAt: number | null;
  /** Where a sender applies the faults only it can (`gap_ms`, `split_frame`), decided by the guard. */
  readonly shaping: AudioShaping;
  /**
   * A new answer begins on the socket (a piece of text arrived): `ttfa_ms` counts from now; for the
   * socket's first answer only with `evenTheFirst` (else it counts from the upgrade). `from` (wall
   * time): where the journal's time to first audio counts from (the end of the user's utterance).
   */
  beginAnswer(evenTheFirst?: boolean, from?: number): void;
  /** The current answer's audio is whole (its last frame is not marked final): a client leaving after it cut nothing. */
  answerEnded(): void;
  /** The client cancelled the audio in progress: the journal times how long audio went on after it. */
  cancelled(): void;
  /** Closes with a close frame; codes that cannot be sent (1005, 1006, 1015…) drop the connection instead. */
  close(code: number, reason: string): void;
  /** Drops the connection without a close frame (how the guard cuts a socket). */
  terminate(): void;
  /** Runs `fn` once when the socket closes. */
  onClose(fn: () => void): void;
  /**
   * A timer on the emulator clock, cancelled when the socket closes; listed under the socket's account
   * in the state view unless `listed` is false (the listener's own rules, such as the idle rule).
   */
  after(ms: number, fn: () => void, label: string, listed?: boolean): number;
  cancel(id: number | null | undefined): void;
  /** Journal summary of a frame the client sent; a text frame with its content (its text, or its JSON already parsed). */
  recordIn(size: number, binary: boolean, event?: string, content?: unknown): void;
  /** Keeps audio the client streamed (PCM16 mono) with the journal entry, for download as WAV. */
  keepAudio(pcm: Buffer, sampleRate: number): void;
  /** The client hears audio that goes outside this socket (a call room's): the emulator counts as busy while it is open. */
  carriesMedia(): void;
}

/**
 * Back-pressure of every socket: while more than this many bytes wait in the socket's send buffer (the
 * client reads slower than the server speaks, or not at all), its stream makes no more frames.
 */
export const SOCKET_BUFFER_BYTES = 1024 * 1024;
/** A frame outside a stream (an event answering a client message) sent while this much waits closes the socket at once. */
const SOCKET_BUFFER_HARD_BYTES = 4 * SOCKET_BUFFER_BYTES;
/** The close code of a socket whose client stopped reading (policy violation), in every family. */
const STALLED_CLOSE_CODE = 1008;
/** After the close frame of a stalled socket (which waits behind the unread bytes), the connection is dropped this soon. */
const STALLED_LINGER_MS = 1000;

/** The largest frame a client may send; `ws` refuses longer ones from their header, before buffering them. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;
export const OVERSIZE_REASON = `message over ${MAX_FRAME_BYTES} bytes (8 MiB)`;

/**
 * `onOversize` sends the socket's own error event for a frame over MAX_FRAME_BYTES; it goes out just
 * before the 1009 close frame. The socket's `cut_after_chunks` is read by its stream guard.
 */
export function openSocketWire(
  emu: SocketHost,
  socket: WebSocket,
  req: FastifyRequest,
  onOversize?: () => void,
  audio?: { carrier: AudioCarrier; latency: 'none' | 'realistic' },
): SocketWire {
  const entry = req.ctx?.entry;
  const accountId = req.ctx?.account?.id ?? null;
  const controller = new AbortController();
  const timers = new Set<number>();
  const cleanups: (() => void)[] = [];
  let closed = false;
  // Frames each way, for the socket's log line.
  let framesIn = 0;
  let framesOut = 0;

  const registered = emu.sockets.add({
    accountId,
    path: pathOf(req),
    openedAtMs: emu.clock.now(),
    close: (code, reason) => wire.close(code, reason),
    buffered: () => socket.bufferedAmount,
  });

  const record = (frame: WsFrameSummary, text?: unknown) => emu.journal.recordFrame(entry, frame, text);
  const isOpen = () => !closed && socket.readyState === socket.OPEN;

  const shutdown = (code: number, byClient: boolean) => {
    if (closed) return;
    closed = true;
    if (byClient) record({ dir: 'in', type: 'close', size: 0, event: String(code), at_ms: emu.clock.now() });
    controller.abort(new Error('socket closed'));
    for (const id of timers) emu.clock.cancel(id);
    timers.clear();
    emu.sockets.remove(registered);
    for (const fn of cleanups.splice(0)) {
      try {
        fn();
      } catch (err) {
        emu.logger.error({ err }, 'websocket clean-up failed');
      }
    }
    finishEntry(req, 101, { code, byClient, framesIn, framesOut });
  };
  socket.on('close', (code) => shutdown(code, true));
  socket.on('message', () => void framesIn++);
  logSocketOpen(req);
  // `ws` answers a frame over maxPayload by calling close(1009) itself, before it emits 'error' and
  // before any message handler could see the frame: this per-socket hook is the one moment where the
  // socket is still open, so the error event goes out first and the close frame carries a reason.
  const closeFrame = socket.close.bind(socket);
  socket.close = (code?: number, reason?: string | Buffer) => {
    if (code !== 1009 || closed || socket.readyState !== socket.OPEN) return closeFrame(code, reason);
    try {
      onOversize?.();
    } catch (err) {
      emu.logger.error({ err }, 'websocket oversize event failed');
    }
    record({ dir: 'out', type: 'close', size: 0, event: '1009', at_ms: emu.clock.now() });
    closeFrame(1009, reason ?? OVERSIZE_REASON);
  };
  // A protocol error (e.g. a frame over 8 MiB) has already started the close handshake with its own
  // code (1009): cutting the TCP connection now would race that close frame and show the client 1006.
  socket.on('error', () => {
    if (socket.readyState !== socket.CLOSING) socket.terminate();
  });

  const raw = (socket as WebSocket & { _socket?: import('node:net').Socket })._socket;
  const buffered = () => socket.bufferedAmount;
  /** The client stopped reading: the socket closes (its close frame waits behind what is unread, so the connection drops soon after). */
  const stalled = () => {
    if (closed) return;
    const waiting = buffered();
    wire.close(STALLED_CLOSE_CODE, `the client stopped reading: ${waiting} bytes waited over ${emu.config.socketStallMs} ms`);
    setTimeout(() => socket.terminate(), STALLED_LINGER_MS).unref();
  };
  const sendText = (body: object, event: string | undefined): boolean => {
    if (!isOpen()) return false;
    // Past the guard (events that answer a client's messages): a client that sends without reading is cut off.
    if (buffered() > SOCKET_BUFFER_HARD_BYTES) {
      stalled();
      return false;
    }
    const text = JSON.stringify(body);
    socket.send(text);
    framesOut++;
    record({ dir: 'out', type: 'text', size: Buffer.byteLength(text), event, at_ms: emu.clock.now() }, body);
    return true;
  };
  let chunkEvent: string | undefined;
  /**
   * The frames still waiting for a commit (the guard's `durable`), when some are: every later frame,
   * and the close, goes after them, in order (a stream's last events, then its close frame).
   */
  let waiting: Promise<unknown> | null = null;
  const keepWaiting = (sent: Promise<unknown>): void => {
    const done = () => {
      if (waiting === next) waiting = null;
    };
    const next: Promise<unknown> = sent.then(done, done);
    waiting = next;
  };
  /** Sends now, or after the frames waiting; a send that has to wait itself becomes what later ones wait for. */
  const inOrder = (send: () => boolean | Promise<boolean>): boolean => {
    if (waiting) {
      keepWaiting(waiting.then(send));
      return !closed;
    }
    const sent = send();
    if (typeof sent === 'boolean') return sent;
    keepWaiting(sent);
    return true;
  };
  // Synchronous writes: the guard answers each send with a boolean. The journal entry finishes when the socket closes.
  const guard = guardStream<object | Buffer>(
    req,
    {
      write: (frame) => {
        if (!Buffer.isBuffer(frame)) return sendText(frame, chunkEvent);
        if (!isOpen()) return false;
        socket.send(frame, { binary: true });
        framesOut++;
        record({ dir: 'out', type: 'binary', size: frame.length, at_ms: emu.clock.now() });
        return true;
      },
      // The fault imitates a dropped connection: no close frame.
      cut: () => wire.terminate(),
      endForShutdown: () => wire.close(1001, 'emulator shutting down'),
      buffered,
      drained: (ms) =>
        new Promise<void>((resolve) => {
          // Nothing will drain a socket that is gone: wait a moment rather than let the guard's loop spin.
          if (!raw || raw.destroyed) return void setTimeout(resolve, Math.min(ms, 20));
          const done = () => {
            clearTimeout(timer);
            raw.off('drain', done);
            raw.off('close', done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          raw.once('drain', done);
          raw.once('close', done);
        }),
      stalled,
    },
    // A socket carrying synthesized audio is paced and damaged by its guard; its first audio counts from the upgrade.
    {
      closing: emu.closing,
      carrier: audio?.carrier,
      latency: audio?.latency,
      gone: controller.signal,
      sendBuffer: { bytes: SOCKET_BUFFER_BYTES, stallMs: emu.config.socketStallMs },
      // A frame that answers a change (a session opened, a task charged) leaves once the change is on disk.
      durable: () => emu.pendingCommit(),
    },
  );

  const wire: SocketWire = {
    signal: controller.signal,
    get closed() {
      return closed || socket.readyState !== socket.OPEN;
    },
    get streamEnded() {
      return guard.ended;
    },
    shaping: guard,
    sendJson(body, event, kind) {
      if (!kind) return inOrder(() => sendText(body, event));
      return inOrder(() => {
        // The guard's writer takes the text only: the event name waits here (no object per chunk).
        chunkEvent = event;
        return guard.send(body, kind);
      });
    },
    sendAudio(chunk) {
      return inOrder(() => guard.send(chunk, AUDIO_CHUNK));
    },
    relay(data, binary) {
      return inOrder(() => {
        if (!isOpen()) return false;
        socket.send(data, { binary });
        framesOut++;
        let content: unknown;
        if (!binary) {
          const text = data.toString('utf8');
          try {
            content = JSON.parse(text);
          } catch {
            content = text;
          }
        }
        const event = content && typeof content === 'object' ? eventNameOf(content as Record<string, unknown>) : undefined;
        record({ dir: 'out', type: binary ? 'binary' : 'text', size: data.length, event, at_ms: emu.clock.now() }, content);
        return true;
      });
    },
    sendAudioFrame(frame, event, kind, stop) {
      const send = () => {
        chunkEvent = event;
        return guard.sendAudio(frame, kind, stop);
      };
      // Its callers wait for it: only frames already waiting for a commit go first.
      return waiting ? waiting.then(send) : send();
    },
    sendEncodedAudio(chunks, how, event) {
      return sendEncoded(guard, chunks, how, (frame, kind) => wire.sendAudioFrame(frame as AudioFrame<object>, event, kind));
    },
    get firstAudioAt() {
      return guard.firstAudioAt;
    },
    beginAnswer(evenTheFirst, from) {
      guard.beginAnswer(evenTheFirst, from);
    },
    answerEnded() {
      guard.answerEnded();
    },
    cancelled() {
      guard.cancelled();
    },
    close(code, reason) {
      if (closed) return;
      inOrder(() => {
        if (closed) return false;
        record({ dir: 'out', type: 'close', size: 0, event: String(code), at_ms: emu.clock.now() });
        if (!sendableCloseCode(code)) socket.terminate();
        else if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, truncateUtf8(reason, 120));
        // Cleanup now: the client may never answer the close frame.
        shutdown(code, false);
        return true;
      });
    },
    terminate() {
      if (closed) return;
      socket.terminate();
      record({ dir: 'out', type: 'close', size: 0, event: '1006', at_ms: emu.clock.now() });
      shutdown(1006, false);
    },
    onClose(fn) {
      if (closed) fn();
      else cleanups.push(fn);
    },
    after(ms, fn, label, listed = true) {
      const id = emu.clock.after(
        ms,
        () => {
          timers.delete(id);
          if (!closed) fn();
        },
        label,
        listed ? (accountId ?? undefined) : undefined,
      );
      timers.add(id);
      return id;
    },
    cancel(id) {
      if (id == null) return;
      timers.delete(id);
      emu.clock.cancel(id);
    },
    recordIn(size, binary, event, content) {
      record({ dir: 'in', type: binary ? 'binary' : 'text', size, event, at_ms: emu.clock.now() }, content);
    },
    carriesMedia() {
      registered.media = true;
    },
    keepAudio(pcm, sampleRate) {
      emu.journal.keepAudio(entry, pcm, sampleRate);
    },
  };
  return wire;
}

/** The name a relayed JSON frame goes by in the journal: its `event` (speech) or `type` (platform). */
function eventNameOf(body: Record<string, unknown>): string | undefined {
  const name = typeof body.event === 'string' ? body.event : typeof body.type === 'string' ? body.type : undefined;
  return name?.slice(0, 40);
}
