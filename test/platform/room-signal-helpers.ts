/**
 * A signalling-only room client, as LiveKit's clients open the socket (`/rtc?access_token=…`, binary
 * protobuf frames): for the rules that need no media (tokens, joins, refusals, leaves).
 */
import { SignalRequest, SignalResponse } from '@livekit/protocol';
import WebSocket from 'ws';

export interface SignalClient {
  ws: WebSocket;
  messages: SignalResponse[];
  /** The next message of this case (waits for it). */
  next(kind: string, timeoutMs?: number): Promise<SignalResponse>;
  send(req: SignalRequest): void;
  closed: Promise<{ code: number; reason: string }>;
}

export function rtcUrl(wsUrl: string, token: string, extra = ''): string {
  return `${wsUrl}/rtc?access_token=${encodeURIComponent(token)}&auto_subscribe=1&protocol=16&sdk=js${extra}`;
}

/** Opens the signalling socket; rejects with the HTTP status and body when the upgrade is refused. */
export function openSignal(url: string): Promise<SignalClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: SignalResponse[] = [];
    const waiters = new Set<() => void>();
    ws.on('message', (data: Buffer, isBinary) => {
      messages.push(isBinary ? SignalResponse.fromBinary(new Uint8Array(data)) : SignalResponse.fromJsonString(data.toString()));
      for (const w of [...waiters]) w();
    });
    const closed = new Promise<{ code: number; reason: string }>((res) => ws.on('close', (code, reason) => res({ code, reason: reason.toString() })));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode, body })));
    });
    ws.on('error', (err) => reject(err));
    ws.on('open', () =>
      resolve({
        ws,
        messages,
        closed,
        send: (req) => ws.send(req.toBinary()),
        next: (kind, timeoutMs = 10_000) =>
          new Promise((res, rej) => {
            let seen = 0;
            const check = () => {
              const hit = messages.slice(seen).find((m) => m.message.case === kind);
              if (!hit) return;
              waiters.delete(check);
              clearTimeout(timer);
              res(hit);
            };
            const timer = setTimeout(
              () => (waiters.delete(check), rej(new Error(`no ${kind} in ${timeoutMs} ms; got ${messages.map((m) => m.message.case)}`))),
              timeoutMs,
            );
            waiters.add(check);
            check();
            seen = 0;
          }),
      }),
    );
  });
}

/** Joins (the join answered) and leaves at once: the room saw the user join. */
export async function joinAndLeave(wsUrl: string, token: string): Promise<SignalResponse> {
  const c = await openSignal(rtcUrl(wsUrl, token));
  const join = await c.next('join');
  c.ws.close();
  await c.closed;
  return join;
}
