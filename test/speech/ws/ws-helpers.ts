import WebSocket from 'ws';

export const KEY = 'speech-ws-key';
export const START = { event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: 'male-qn-qingse' } };

export interface WsResult {
  messages: any[];
  close: { code: number; reason: string };
  /** HTTP status when the upgrade was refused. */
  refusedStatus?: number;
  refusedBody?: string;
}

export function wsUrl(httpUrl: string): string {
  return `${httpUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`;
}

/** Opens a socket with the Bearer key (null: none) and extra headers. */
export function connect(httpUrl: string, opts: { key?: string | null; headers?: Record<string, string> } = {}): WebSocket {
  const key = opts.key === undefined ? KEY : opts.key;
  const headers: Record<string, string> = { ...opts.headers };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return new WebSocket(wsUrl(httpUrl), { headers });
}

/**
 * Sends every frame as soon as the socket opens (without waiting for connected_success, as LiveKit
 * does) and collects every message until the server closes; `onMessage` may react (and send more).
 */
export function session(
  httpUrl: string,
  frames: unknown[],
  opts: { key?: string | null; headers?: Record<string, string>; onMessage?: (msg: any, ws: WebSocket, all: any[]) => void } = {},
): Promise<WsResult> {
  return new Promise((resolve, reject) => {
    const ws = connect(httpUrl, opts);
    const messages: any[] = [];
    ws.on('open', () => {
      for (const f of frames) ws.send(typeof f === 'string' || Buffer.isBuffer(f) ? f : JSON.stringify(f));
    });
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      messages.push(msg);
      opts.onMessage?.(msg, ws, messages);
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ messages, close: { code: 0, reason: '' }, refusedStatus: res.statusCode, refusedBody: body }));
    });
    ws.on('close', (code, reason) => resolve({ messages, close: { code, reason: String(reason) } }));
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

/** The audio of each piece: the chunks up to and including each `is_final`, with its extra_info. */
export function piecesOf(messages: any[]): { audio: Buffer; extra: any; chunks: number }[] {
  const out: { audio: Buffer; extra: any; chunks: number }[] = [];
  let parts: Buffer[] = [];
  for (const m of messages) {
    if (m.event !== 'task_continued' || m.base_resp.status_code !== 0) continue;
    parts.push(Buffer.from(m.data.audio, 'hex'));
    if (m.is_final) {
      out.push({ audio: Buffer.concat(parts), extra: m.extra_info, chunks: parts.length });
      parts = [];
    }
  }
  return out;
}

/** Waits until `check` holds (polling the server's view), failing after `tries` rounds. */
export async function until(check: () => Promise<boolean>, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition never held');
}
