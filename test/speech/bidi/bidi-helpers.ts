import WebSocket from 'ws';
import { START } from '../ws/ws-helpers.js';

export const BIDI_KEY = 'speech-bidi-key';
export const BIDI_START = { ...START };

export function bidiUrl(httpUrl: string): string {
  return `${httpUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2_bidi`;
}

/** A bidi client driven step by step: send frames, wait for events, read what came. */
export interface BidiClient {
  ws: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  send(frame: unknown): void;
  /** Resolves once `count` messages match (counting all received so far). */
  waitFor(match: (m: any) => boolean, count?: number): Promise<any>;
  events(): string[];
}

export function bidiClient(httpUrl: string, opts: { key?: string | null; headers?: Record<string, string> } = {}): Promise<BidiClient> {
  const key = opts.key === undefined ? BIDI_KEY : opts.key;
  const headers: Record<string, string> = { ...opts.headers };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const ws = new WebSocket(bidiUrl(httpUrl), { headers });
  const messages: any[] = [];
  const waiters: { match: (m: any) => boolean; count: number; resolve: (m: any) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const hits = messages.filter(w.match);
      if (hits.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hits[w.count - 1]);
      }
    }
  };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)));
    check();
  });
  const client: BidiClient = {
    ws,
    messages,
    closed,
    send: (frame) => ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame)),
    waitFor: (match, count = 1) =>
      new Promise((resolve, reject) => {
        waiters.push({ match, count, resolve });
        check();
        void closed.then(() => setTimeout(() => reject(new Error(`closed while waiting; got ${client.events().join(',')}`)), 50));
      }),
    events: () => messages.map((m) => m.event),
  };
  return new Promise((resolve, reject) => {
    ws.on('open', () => resolve(client));
    ws.on('error', reject);
  });
}

/** Opens, sends task_start and waits for task_started. */
export async function startedClient(httpUrl: string, start: Record<string, unknown> = BIDI_START, opts: { key?: string } = {}): Promise<BidiClient> {
  const c = await bidiClient(httpUrl, opts);
  c.send(start);
  await c.waitFor((m) => m.event === 'task_started' || m.event === 'task_failed');
  return c;
}

/** Sends frames one after another as soon as the socket opens and collects until the server closes. */
export async function bidiSession(httpUrl: string, frames: unknown[], opts: { key?: string | null; headers?: Record<string, string> } = {}) {
  const c = await bidiClient(httpUrl, opts);
  for (const f of frames) c.send(f);
  const close = await c.closed;
  return { messages: c.messages, close };
}

/** The sentences of a session: each sentence_start … sentence_end with its audio messages. */
export function sentencesOf(messages: any[]): { trace: string; audio: Buffer; extra: any; chunks: any[]; ended: boolean }[] {
  const out: { trace: string; audio: Buffer; extra: any; chunks: any[]; ended: boolean }[] = [];
  let cur: (typeof out)[number] | null = null;
  for (const m of messages) {
    if (m.event === 'sentence_start') out.push((cur = { trace: m.trace_id, audio: Buffer.alloc(0), extra: null, chunks: [], ended: false }));
    else if (m.event === 'task_continued' && m.data?.audio !== undefined && cur) {
      cur.chunks.push(m);
      cur.audio = Buffer.concat([cur.audio, Buffer.from(m.data.audio, 'hex')]);
      if (m.is_final) cur.extra = m.extra_info;
    } else if (m.event === 'sentence_end' && cur) {
      cur.ended = true;
      cur = null;
    }
  }
  return out;
}
