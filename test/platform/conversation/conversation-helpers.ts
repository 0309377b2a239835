import { MPEGDecoder } from 'mpg123-decoder';
import WebSocket from 'ws';
import { synthesize } from '../../../src/audio/index.js';
import type { Emulator } from '../../../src/core/emulator.js';
import { control } from '../../helpers/emulator.js';

/** A WebSocket client that records every message, for the conversation and recognition stream tests. */
export interface Received {
  kind: 'event' | 'audio';
  event?: any;
  audio?: Buffer;
}

export interface Client {
  ws: WebSocket;
  messages: Received[];
  events(): any[];
  audio(): Buffer;
  /** Resolves with the first event of `type` at or after position `from` of `messages`. */
  waitFor(type: string, from?: number, timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
  sendJson(value: unknown): void;
}

export function wsUrl(platformUrl: string, path: string, key?: string): string {
  const base = platformUrl.replace(/^http/, 'ws') + path;
  return key === undefined ? base : `${base}?api_key=${encodeURIComponent(key)}`;
}

export async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(url, { headers });
  const messages: Received[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  ws.on('message', (data, isBinary) => {
    const buf = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
    messages.push(isBinary ? { kind: 'audio', audio: buf } : { kind: 'event', event: JSON.parse(buf.toString('utf8')) });
    wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      wake();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const client: Client = {
    ws,
    messages,
    events: () => messages.filter((m) => m.kind === 'event').map((m) => m.event),
    audio: () => Buffer.concat(messages.filter((m) => m.kind === 'audio').map((m) => m.audio!)),
    sendJson: (value) => ws.send(JSON.stringify(value)),
    closed,
    waitFor(type, from = 0, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${type} event within ${timeoutMs} ms; got ${JSON.stringify(client.events().map((e) => e.type))}`)),
          timeoutMs,
        );
        const check = () => {
          const hit = messages.slice(from).find((m) => m.kind === 'event' && m.event.type === type);
          if (hit) {
            clearTimeout(timer);
            resolve(hit.event);
          } else if (ws.readyState === WebSocket.CLOSED) {
            clearTimeout(timer);
            reject(new Error(`socket closed before ${type}; got ${JSON.stringify(client.events())}`));
          } else waiters.push(check);
        };
        check();
      });
    },
  };
  return client;
}

/** Sends each message while the socket stays open: a Buffer as a binary frame, a string as is, anything else as JSON. */
export function sendAll(ws: WebSocket, messages: unknown[]): void {
  for (const m of messages) {
    if (ws.readyState !== WebSocket.OPEN) break;
    if (Buffer.isBuffer(m)) ws.send(m, { binary: true });
    else ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }
}

/** The status and body of a refused upgrade. */
export function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => reject(new Error('upgrade was accepted')));
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
}

/**
 * The emulator's own speech as a client would have it: synthesized at 16 kHz mono PCM16, with its
 * signature record stored as the synthesis endpoints store it.
 */
export async function spokenPcm(emu: Emulator, text: string, voice = 'male_calm'): Promise<{ pcm: Buffer; durationMs: number }> {
  const r = await synthesize({ text, voices: [{ id: voice, weight: 1 }], sampleRate: 16000, channels: 1 });
  emu.signatures.put({
    id: r.signatureId,
    kind: 'speech',
    text,
    language: /\p{Script=Han}/u.test(text) ? 'zh' : 'en',
    speakers: [{ speaker: 1, voices: [voice] }],
    segments: r.timeline.sentences.map((s) => ({ text: s.text, startMs: s.startMs, endMs: s.endMs, speaker: 1 })),
    durationMs: r.durationMs,
    createdAtMs: emu.clock.now(),
  });
  return { pcm: Buffer.from(r.pcm.buffer, r.pcm.byteOffset, r.pcm.byteLength), durationMs: r.durationMs };
}

export function silencePcm(ms: number): Buffer {
  return Buffer.alloc(Math.round((ms / 1000) * 16000) * 2);
}

/** Sends PCM as ~100 ms binary frames (3,200 bytes), yielding between frames so events interleave. */
export async function sendFrames(ws: WebSocket, pcm: Buffer, frameBytes = 3200): Promise<void> {
  for (let at = 0; at < pcm.length; at += frameBytes) {
    ws.send(pcm.subarray(at, at + frameBytes), { binary: true });
    await new Promise((r) => setImmediate(r));
  }
}

/** Decodes MP3 bytes as a user would (mpg123): sample rate, channels and decoded duration. */
export async function decodeMp3(bytes: Buffer): Promise<{ sampleRate: number; durationMs: number; samples: number; errors: number }> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const r = decoder.decode(new Uint8Array(bytes));
    return { sampleRate: r.sampleRate, samples: r.samplesDecoded, durationMs: (r.samplesDecoded * 1000) / r.sampleRate, errors: r.errors.length };
  } finally {
    decoder.free();
  }
}

/** Resolves once the server has read every frame sent before (its pong answers after them). */
export function flush(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    ws.once('pong', () => resolve());
    ws.ping();
  });
}

/** One account's part of `GET /_emulator/state`, found by the redacted label of its key. */
export function accountState(platformUrl: string, key: string): Promise<any> {
  return control(platformUrl).accountState(key);
}

/** Polls the state view until `ok` holds (the server notices a dropped client asynchronously). */
export async function waitForState(platformUrl: string, key: string, ok: (a: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const a = await accountState(platformUrl, key);
    if (ok(a)) return a;
    if (Date.now() > end) throw new Error(`state never matched: ${JSON.stringify(a)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
