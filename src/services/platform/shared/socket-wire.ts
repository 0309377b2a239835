import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Emulator } from '../../../core/emulator.js';
import type { FrameKind } from '../../../core/stream/guard.js';
import { openSocketWire, type SocketWire } from '../../../core/socket/wire.js';

/** The platform sockets' wire: JSON events named by their `type`, over the shared socket plumbing. */
export interface Wire extends SocketWire {
  /** Sends one event; with a `kind` it is a chunk of the socket's stream (see SocketWire.sendJson). */
  send(event: { type: string } & Record<string, unknown>, kind?: FrameKind): boolean;
}

/**
 * `onOversize` sends the socket's `error` event for a frame over 8 MiB, just before the 1009 close.
 * A socket that carries synthesized audio names it (`audio`): its guard paces and damages that audio.
 */
export function openWire(emu: Emulator, socket: WebSocket, req: FastifyRequest, onOversize: () => void, audio?: Parameters<typeof openSocketWire>[4]): Wire {
  const wire = openSocketWire(emu, socket, req, onOversize, audio) as Wire;
  wire.send = (event, kind) => wire.sendJson(event, event.type, kind);
  return wire;
}
