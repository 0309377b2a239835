/**
 * A socket to another server on the client's behalf: the upstream being recorded, or the emulator's own socket when
 * no tape matched. The client's own headers go with it (its credentials among them, which are never written to a
 * tape); the handshake's own headers and the emulator's control headers do not.
 */
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { MAX_FRAME_BYTES } from '../../core/socket/wire.js';

/** Headers that belong to one hop or to the handshake itself, never sent on. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'upgrade',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
]);

/** The client's headers as an upstream gets them; `extra` are added (the emulator's own pass for a fall-through). */
export function forwardedHeaders(
  headers: IncomingHttpHeaders,
  options: { keepEmulatorHeaders: boolean; extra?: Record<string, string> },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    // The emulator's own directives (faults, request ids) mean nothing to the real service.
    if (!options.keepEmulatorHeaders && name.startsWith('x-emulator-')) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { ...out, ...options.extra };
}

/** `http://host:port` + `/path?query` as a WebSocket URL. */
export function socketUrl(base: string, pathAndQuery: string): string {
  return `${base.replace(/\/+$/, '').replace(/^http/, 'ws')}${pathAndQuery}`;
}

/** One frame of the upstream. */
export type UpstreamFrame = (data: Buffer, binary: boolean) => void;

/**
 * How opening the upstream socket ended: open, or why not (unreachable, or its refusal of the upgrade). Open, its
 * frames are held from the first moment (a greeting may come in the same read as the upgrade's answer) until `listen`.
 */
export type Opening = { ok: true; socket: WebSocket; listen(onFrame: UpstreamFrame): void } | { ok: false; reason: string };

/** How long an upstream may take to accept the upgrade before it counts as unreachable. */
export const UPSTREAM_OPEN_TIMEOUT_MS = 10_000;

/**
 * Opens a socket to `url` with `headers` and the client's subprotocols; settles once it is open or has failed. An
 * upgrade the upstream refuses reads its status and the start of its body for the reason.
 */
export function openUpstream(url: string, headers: Record<string, string>, protocols: string[]): Promise<Opening> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: Opening) => {
      if (settled) return;
      settled = true;
      resolve(o);
    };
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, protocols, { headers, maxPayload: MAX_FRAME_BYTES, handshakeTimeout: UPSTREAM_OPEN_TIMEOUT_MS, perMessageDeflate: false });
    } catch (err) {
      return settle({ ok: false, reason: (err as Error).message });
    }
    const early: { data: Buffer; binary: boolean }[] = [];
    let onFrame: UpstreamFrame | null = null;
    socket.on('message', (data, binary) => {
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (onFrame) onFrame(bytes, binary);
      else early.push({ data: bytes, binary });
    });
    const listen = (fn: UpstreamFrame) => {
      onFrame = fn;
      for (const f of early.splice(0)) fn(f.data, f.binary);
    };
    socket.once('open', () => settle({ ok: true, socket, listen }));
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 300) body += c;
      });
      res.on('end', () =>
        settle({ ok: false, reason: `the upstream refused the upgrade with HTTP ${res.statusCode}${body ? `: ${body.slice(0, 300)}` : ''}` }),
      );
      res.on('error', () => settle({ ok: false, reason: `the upstream refused the upgrade with HTTP ${res.statusCode}` }));
    });
    socket.on('error', (err: Error & { code?: string }) => settle({ ok: false, reason: `the upstream cannot be reached (${err.code ?? err.message})` }));
  });
}

/** The subprotocols the client asked for. */
export function protocolsOf(headers: IncomingHttpHeaders): string[] {
  const raw = headers['sec-websocket-protocol'];
  if (!raw) return [];
  return (Array.isArray(raw) ? raw.join(',') : raw)
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}
