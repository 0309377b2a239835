/**
 * What every WebSocket of the emulator shares below its wire (core/socket/wire.ts): how a client's protocol
 * error is ended, one message's bytes, and the close codes and reasons a close frame may carry.
 */
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';

/** Codes of a client that went away; `ws` protocol errors (WS_ERR_*) are a client's mistake too. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

/** How long a socket closed for a protocol error waits for the client to end its side. */
const CLOSE_LINGER_MS = 5000;

/**
 * The `errorHandler` of the WebSocket plugin on every listener. A client's mistake (a frame over
 * 8 MiB, a bad opcode, invalid UTF-8, a dropped connection) is one debug line without a stack, and
 * the close `ws` started (1009, 1002, 1007…) is sent before the connection ends: the TCP side is
 * half-closed once the close frame is queued, so the client reads that frame instead of a reset
 * (1006) however loaded the machine is. A failure of a handler is logged with its stack.
 */
export function socketErrorHandler(error: Error & { code?: string }, socket: WebSocket, request: FastifyRequest): void {
  const code = error.code ?? '';
  if (!code.startsWith('WS_ERR_') && !CLIENT_GONE.has(code)) {
    request.log.error({ err: error }, 'websocket handler failed');
    return void socket.terminate();
  }
  request.log.debug({ code, reason: error.message }, 'websocket closed for a client protocol error');
  const raw = (socket as WebSocket & { _socket?: import('node:net').Socket })._socket;
  if (socket.readyState !== socket.CLOSING || !raw || raw.destroyed) return void socket.terminate();
  // The close frame is already in the raw socket's write queue: end() sends it, then FIN; what the
  // client still sends is read and dropped by `ws`, so the kernel has no reason to reset.
  raw.end();
  setTimeout(() => raw.destroy(), CLOSE_LINGER_MS).unref();
}

/** One client message's bytes, whatever shape `ws` handed them in. */
export function messageBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Close codes a close frame may carry (RFC 6455 7.4; `ws` refuses the others). */
export function sendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/** A close reason is at most 123 bytes. */
export function truncateUtf8(text: string, maxBytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > maxBytes) out = [...out].slice(0, -1).join('');
  return out;
}
