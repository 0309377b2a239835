/**
 * A replayed socket whose client said something no tape said: the emulator's own socket takes over. It is opened on
 * the emulator's own listener (marked so that no tape answers it, with the client's headers, faults included), told
 * everything the client said so far, and from then on the two are joined. The frames it answers to what the tape
 * already answered are not sent twice: as many of its first frames as the replay sent are dropped, and the ids they
 * carried are mapped onto the ids the replay spoke with, so the socket keeps one session id and one trace id.
 * Under `--record-mode record-missing` the socket goes to the upstream instead, and is recorded as a new tape.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { SocketWire } from '../../core/socket/wire.js';
import { failureIds, PASS_HEADER, type SocketTapesHost } from './host.js';
import type { SocketKind } from './kinds.js';
import { valuesAt } from './match.js';
import { TimelineRecorder } from './timeline.js';
import { forwardedHeaders, openUpstream, protocolsOf, socketUrl } from './upstream.js';
import { writeSocketTape } from './write.js';

export interface ReplayedSoFar {
  /** Every client frame, in order. */
  said: { data: Buffer; binary: boolean }[];
  /** The fresh fields of each frame the replay sent. */
  sentIds: Map<string, string>[];
}

/** Joins the client's socket to the emulator's own (or the upstream's); what the client says next goes through the returned function. */
export function fallThrough(
  host: SocketTapesHost,
  kind: SocketKind,
  req: FastifyRequest,
  wire: SocketWire,
  sofar: ReplayedSoFar,
): (data: Buffer, binary: boolean) => void {
  const { emu } = host;
  const listener = req.ctx?.listener ?? kind.service;
  const upstream = host.recordMode === 'record-missing' ? host.upstreamOf(listener) : undefined;
  const base = upstream ?? ownUrl(host, listener);
  const headers = forwardedHeaders(req.headers, { keepEmulatorHeaders: !upstream, extra: upstream ? {} : { [PASS_HEADER]: host.pass } });
  const timeline = upstream && host.recordStore ? new TimelineRecorder(host.recordStore, kind) : null;
  const waiting: { data: Buffer; binary: boolean }[] = [...sofar.said];
  let up: WebSocket | null = null;
  let clientGone = false;
  for (const f of waiting) timeline?.clientFrame(f.data, f.binary);
  wire.onClose(() => {
    clientGone = true;
    timeline?.closed('in', 1000, '');
    if (up && (up.readyState === up.OPEN || up.readyState === up.CONNECTING)) up.close(1000, 'client left');
  });

  const opened = performance.now();
  void openUpstream(socketUrl(base, req.url), headers, protocolsOf(req.headers)).then((opening) => {
    if (!opening.ok) {
      void timeline?.abandon();
      if (clientGone) return;
      const failure = kind.failure(opening.reason, failureIds(emu, req));
      wire.sendJson(failure.event, String(failure.event.event ?? failure.event.type));
      return wire.close(failure.close, opening.reason.slice(0, 120));
    }
    up = opening.socket;
    const headMs = Math.round(performance.now() - opened);
    if (clientGone) return void up.close(1000, 'client left');
    for (const f of waiting.splice(0)) up.send(f.data, { binary: f.binary });
    // The replay's own frames stand for the first ones of the emulator's: those are dropped, their ids mapped.
    let drop = sofar.sentIds.length;
    const ids = new Map<string, string>();
    opening.listen((bytes, binary) => {
      timeline?.serverFrame(bytes, binary);
      let event: unknown;
      if (!binary && kind.fresh.length) event = parseJson(bytes.toString('utf8'));
      if (drop > 0) {
        const spoken = sofar.sentIds[sofar.sentIds.length - drop]!;
        drop--;
        for (const [path, value] of valuesAt(event, kind.fresh)) {
          const was = spoken.get(path);
          if (was !== undefined) ids.set(value, was);
        }
        return;
      }
      if (event && typeof event === 'object' && ids.size) {
        let changed = false;
        for (const path of kind.fresh) {
          const obj = event as Record<string, unknown>;
          const v = obj[path];
          if (typeof v === 'string' && ids.has(v)) {
            obj[path] = ids.get(v);
            changed = true;
          }
        }
        if (changed) return void wire.relay(Buffer.from(JSON.stringify(event)), false);
      }
      wire.relay(bytes, binary);
    });
    up.on('error', (err) => emu.logger.debug({ err }, 'fall-through socket error'));
    up.on('close', (code: number, reason: Buffer) => {
      const why = reason.toString('utf8');
      timeline?.closed('out', code, why);
      if (!clientGone) wire.close(code === 1005 ? 1000 : code, why);
      if (timeline && upstream && host.recordStore) void writeSocketTape(host, host.recordStore, kind, req, { upstream, headMs, timeline });
    });
  });

  return (data, binary) => {
    timeline?.clientFrame(data, binary);
    if (up && up.readyState === up.OPEN) up.send(data, { binary });
    else if (!up) waiting.push({ data, binary });
  };
}

/** The emulator's own listener the socket came in on. */
function ownUrl(host: SocketTapesHost, listener: string): string {
  const urls = host.emu.urls;
  return listener === 'speech-backup' ? urls.speechBackup : listener === 'platform' ? urls.platform : urls.speech;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
