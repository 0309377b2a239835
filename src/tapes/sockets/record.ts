/**
 * `--record`: a socket opened on the emulator is opened on the upstream too, at the same path with the client's own
 * credentials, and every frame is passed on as it arrives, both ways, text and binary, while the timeline is written.
 * When the socket ends the tape is written whole (or not at all). An upstream that cannot be reached, or that refuses
 * the upgrade, gets the family's own failure event and close on the client's socket, journaled, and no tape.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { messageBytes, sendableCloseCode } from '../../core/socket/protocol.js';
import { openSocketWire } from '../../core/socket/wire.js';
import type { SocketKind } from './kinds.js';
import { TimelineRecorder } from './timeline.js';
import { forwardedHeaders, openUpstream, protocolsOf, socketUrl } from './upstream.js';
import { failureIds, type SocketTapesHost } from './host.js';
import { writeSocketTape } from './write.js';

export async function recordSocket(host: SocketTapesHost, kind: SocketKind, socket: WebSocket, req: FastifyRequest, upstream: string): Promise<void> {
  const { emu } = host;
  const store = host.recordStore!;
  const entry = req.ctx?.entry ?? null;
  const wire = openSocketWire(emu, socket, req);
  const timeline = new TimelineRecorder(store, kind);
  const opened = performance.now();
  // What the client says before the upstream is open waits, in order.
  const waiting: { data: Buffer; binary: boolean }[] = [];
  let up: WebSocket | null = null;
  let clientGone = false;

  socket.on('message', (data: RawData, binary: boolean) => {
    const bytes = messageBytes(data);
    wire.recordIn(bytes.length, binary, undefined, binary ? undefined : bytes.toString('utf8'));
    timeline.clientFrame(bytes, binary);
    if (up && up.readyState === up.OPEN) up.send(bytes, { binary });
    else waiting.push({ data: bytes, binary });
  });
  socket.on('close', (code: number, reason: Buffer) => {
    clientGone = true;
    timeline.closed('in', code, reason.toString('utf8'));
    if (up && (up.readyState === up.OPEN || up.readyState === up.CONNECTING)) up.close(sendableCloseCode(code) ? code : 1000, reason.toString('utf8'));
  });

  const headers = forwardedHeaders(req.headers, { keepEmulatorHeaders: false });
  const opening = await openUpstream(socketUrl(upstream, req.url), headers, protocolsOf(req.headers));
  if (!opening.ok) {
    entry?.noteTape({ mode: 'forwarded', upstream, recorded: false, problem: opening.reason });
    await timeline.abandon();
    if (clientGone) return;
    const failure = kind.failure(opening.reason, failureIds(emu, req));
    wire.sendJson(failure.event, String(failure.event.event ?? failure.event.type));
    return wire.close(failure.close, opening.reason.slice(0, 120));
  }
  up = opening.socket;
  const headMs = Math.round(performance.now() - opened);
  if (clientGone) {
    // The client left before the upstream answered: nothing was exchanged, nothing is taped.
    up.close(1000, 'client left');
    return void (await timeline.abandon());
  }
  for (const w of waiting.splice(0)) up.send(w.data, { binary: w.binary });

  opening.listen((bytes, binary) => {
    timeline.serverFrame(bytes, binary);
    wire.relay(bytes, binary);
  });
  up.on('error', (err) => emu.logger.debug({ err }, 'upstream socket error while recording'));
  up.on('close', (code: number, reason: Buffer) => {
    const why = reason.toString('utf8');
    if (!clientGone) {
      timeline.closed('out', code, why);
      // A close without a code (1005) is a plain close to the client; an abnormal end (1006) drops the connection.
      wire.close(code === 1005 ? 1000 : code, why);
    }
    void writeSocketTape(host, store, kind, req, { upstream, headMs, timeline });
  });
}
