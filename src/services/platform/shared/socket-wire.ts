import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Emulator } from '../../../core/emulator.js';
import { openSocketWire, type SocketWire } from '../../../core/wire.js';

export { sendableCloseCode } from '../../../core/wire.js';

/** The platform sockets' wire: JSON events named by their `type`, over the shared socket plumbing. */
export interface Wire extends SocketWire {
  send(event: { type: string } & Record<string, unknown>): void;
}

export function openWire(emu: Emulator, socket: WebSocket, req: FastifyRequest, cutAfterChunks?: number): Wire {
  const wire = openSocketWire(emu, socket, req, cutAfterChunks) as Wire;
  wire.send = (event) => wire.sendJson(event, event.type);
  return wire;
}

/** One message's bytes, whatever shape `ws` handed them in. */
export function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
