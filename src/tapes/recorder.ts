/**
 * Recording: the request goes to the real service with the client's own credentials; the answer comes back to the
 * client as it arrives (an event stream or a chunked body chunk by chunk, never held whole) while the tape is made
 * beside it; links the answer hands out are fetched (they expire upstream); the tape is written atomically at the end.
 * A whole answer (JSON, a file) is sent once its tape is on disk, so a write that fails is the client's error, not a
 * silent loss. An upstream that cannot be reached is the operation's own error, journaled, and no tape.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Refusal } from '../core/http/refusal.js';
import { embeddedJson, externalize, sniffExtension } from './body.js';
import {
  CREDENTIAL_MARKER,
  extensionOf,
  parseTape,
  type Tape,
  type TapeAnswer,
  type TapeBody,
  type TapeDownload,
  type TapeRequest,
  type TapeStep,
} from './format.js';
import { declarationOf, matchKey, tapeIdOf } from './match.js';
import { drained, StreamedBody, streamedTapeRequest } from './multipart.js';
import { HOP_HEADERS, presentedSecrets, tapeRequestOf, withoutSecrets } from './request.js';
import { SseReader } from './sse.js';
import { keyText, sha256, type TapesContext } from './context.js';
import { UpstreamError } from './upstream.js';

/** Answer headers a tape never keeps: the connection's own, and what is recomputed on replay. */
const DROPPED_ANSWER_HEADERS = new Set([...HOP_HEADERS, 'date', 'set-cookie', 'x-emulator-request-id', 'x-emulator-fault-ignored']);

interface Exchange {
  service: 'speech' | 'platform';
  operation: string;
  upstream: string;
  /** The request's body: its bytes, or a multipart form streamed through a temporary file (multipart.ts). */
  body: Buffer | StreamedBody;
}

function answerHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !DROPPED_ANSWER_HEADERS.has(name)) out[name] = [value].flat().join(', ');
  return out;
}

function jsonOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isJson(type: string): boolean {
  return /json/i.test(type);
}

export async function forwardAndRecord(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  ex: Exchange,
  refuse: (r: Refusal) => Error,
): Promise<void> {
  const streamed = ex.body instanceof StreamedBody ? ex.body : null;
  try {
    await forwardAndRecordBody(ctx, req, reply, ex, refuse, streamed);
  } finally {
    await streamed?.remove();
  }
}

async function forwardAndRecordBody(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  ex: Exchange,
  refuse: (r: Refusal) => Error,
  form: StreamedBody | null,
): Promise<void> {
  const entry = req.ctx.entry;
  const started = performance.now();
  let res: IncomingMessage;
  try {
    // A form goes on as it arrives (record), or from its file once it was matched against the tapes (record-missing).
    const body = !form ? (ex.body as Buffer) : form.forward ? { stream: form.forward, ...lengthOf(req) } : { stream: form.bytes(), length: form.size };
    res = await ctx.upstream.send(ex.upstream, req.method, req.raw.url ?? '/', req.headers, body);
  } catch (err) {
    // The body's own failure first (past its limit, or the client left while the upstream went): the answer it gets.
    await form?.done.catch(() => undefined);
    if (form?.failure) throw form.failure;
    const problem = `the upstream ${ex.upstream} could not be reached (${(err as Error).message})`;
    entry?.noteTape({ mode: 'forwarded', upstream: ex.upstream, recorded: false, problem });
    if (err instanceof UpstreamError) throw refuse({ kind: 'upstream', status: 502, message: `${problem}; no tape was written` });
    throw err;
  }
  // A body past its limit, or one the client left: that is the answer (the family's 413), whatever the upstream said.
  await form?.done.catch((err: unknown) => {
    res.destroy();
    throw err;
  });
  const headMs = Math.round(performance.now() - started);
  entry?.noteTape({ mode: 'forwarded', upstream: ex.upstream });
  const headers = answerHeaders(res);
  const type = headers['content-type'] ?? '';
  const status = res.statusCode ?? 502;
  const streamed = /text\/event-stream/i.test(type) || (!isJson(type) && res.headers['content-length'] === undefined);
  const base = { ctx, req, ex, headMs, status, headers };
  if (!streamed) return recordWhole(base, reply, res);
  return recordStream(base, reply, res, /text\/event-stream/i.test(type) ? 'sse' : 'chunks');
}

interface Base {
  ctx: TapesContext;
  req: FastifyRequest;
  ex: Exchange;
  headMs: number;
  status: number;
  headers: Record<string, string>;
}

/** The client's announced body length, passed on with a body that streams (chunked when it announced none). */
function lengthOf(req: FastifyRequest): { length?: number } {
  const length = Number(req.headers['content-length']);
  return Number.isInteger(length) && length >= 0 ? { length } : {};
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

/** A whole answer: read, its tape written, then sent (the journal keeps it as the emulator's own answers). */
async function recordWhole(b: Base, reply: FastifyReply, res: IncomingMessage): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = await readAll(res);
  } catch (err) {
    b.req.ctx.entry?.noteTape({ recorded: false, problem: `the upstream's answer broke off (${(err as Error).message})` });
    throw err;
  }
  try {
    await tapeWhole(b, bytes);
  } catch (err) {
    b.req.ctx.entry?.noteTape({ recorded: false, problem: `the tape could not be written (${(err as Error).message})` });
    throw asTapeWrite(err);
  }
  const type = b.headers['content-type'];
  void reply.code(b.status).headers(b.headers);
  // JSON as text: the journal summarizes it and reads its spec code, as for the emulator's own answers.
  void reply.send(type && isJson(type) ? bytes.toString('utf8') : bytes);
}

/** The tape of a whole answer: its body (audio inside JSON and the file itself stored by hash), its downloads. */
async function tapeWhole(b: Base, bytes: Buffer): Promise<void> {
  const type = b.headers['content-type'];
  const put = (data: Uint8Array, ext: string) => b.ctx.store.putFile(data, ext);
  let body: TapeBody;
  let parsed: unknown;
  if (type && isJson(type)) {
    parsed = jsonOrUndefined(bytes);
    // A write that fails is the exchange's failure (never a JSON answer kept as text instead).
    body = parsed === undefined ? { text: bytes.toString('utf8') } : { json: await externalize(parsed, put) };
  } else
    body = bytes.length
      ? { file: { $file: await put(bytes, extensionOf(type) === 'bin' ? sniffExtension(bytes) : extensionOf(type)), encoding: 'raw' } }
      : { none: true };
  const downloads = await fetchDownloads(b, parsed);
  await writeTape(b, { status: b.status, headers: b.headers, body }, downloads);
}

/**
 * A streamed answer: each chunk goes to the client as it can take it (the upstream is read no faster than the client
 * reads, so a slow client never makes the emulator hold the stream); the tape's timeline notes when each arrived. The
 * tape is written when the stream ends whole; a stream cut on either side is no tape (noted in the journal): a client
 * that leaves first also ends the upstream's request.
 */
async function recordStream(b: Base, reply: FastifyReply, res: IncomingMessage, kind: 'sse' | 'chunks'): Promise<void> {
  const entry = b.req.ctx.entry;
  const out = new PassThrough();
  const head = performance.now();
  const steps: TapeStep[] = [];
  const sse = kind === 'sse' ? new SseReader() : null;
  const events: { t: number; event: unknown }[] = [];
  const writer =
    kind === 'chunks' ? b.ctx.store.fileWriter(extensionOf(b.headers['content-type']) === 'bin' ? 'bin' : extensionOf(b.headers['content-type'])) : null;
  entry?.markStream(b.headers['content-type'] ?? '', { upstream: b.ex.upstream });
  // The client left before the stream ended (its connection closed with the answer unfinished).
  let left = false;
  const clientClosed = () => {
    if (reply.raw.writableFinished) return;
    left = true;
    res.destroy();
    out.destroy();
  };
  reply.raw.once('close', clientClosed);
  void reply.code(b.status).headers(b.headers).send(out);
  const done = (async () => {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      const t = Math.round(performance.now() - head);
      if (sse) for (const event of sse.push(chunk)) (events.push({ t, event }), entry?.countChunk());
      if (writer) {
        const at = writer.add(chunk);
        steps.push({ dir: 'out', t_ms: t, frame: { $file: '', encoding: 'raw', offset: at.offset, bytes: at.bytes } });
        entry?.countChunk(chunk);
      }
      if (!out.write(chunk)) await drained(out);
      if (left) return;
    }
    if (sse) for (const event of sse.end()) events.push({ t: Math.round(performance.now() - head), event });
  })();
  try {
    await done;
  } catch (err) {
    out.destroy(err as Error);
    await writer?.abandon();
    if (!left) entry?.noteTape({ recorded: false, problem: `the upstream's stream broke off (${(err as Error).message})` });
  }
  if (left) {
    await writer?.abandon();
    entry?.noteTape({ recorded: false, problem: 'the client left before the stream ended; no tape was written' });
    return;
  }
  if (out.destroyed) return;
  const put = (data: Uint8Array, ext: string) => b.ctx.store.putFile(data, ext);
  try {
    if (writer) {
      const name = await writer.finish();
      for (const s of steps) if ('frame' in s) s.frame.$file = name;
    }
    for (const { t, event } of events) steps.push({ dir: 'out', t_ms: t, event: await externalize(event, put) });
    const downloads = await fetchDownloads(
      b,
      events.map((e) => e.event),
    );
    // A client that left while the files were written: still no tape (its files go at the next `tapes prune`).
    if (left) return void entry?.noteTape({ recorded: false, problem: 'the client left before the stream ended; no tape was written' });
    await writeTape(b, { status: b.status, headers: b.headers, stream: { kind, steps } }, downloads);
    reply.raw.off('close', clientClosed);
    // The stream ends once its tape is on disk: a client that saw the end may replay it at once.
    out.end();
  } catch (err) {
    reply.raw.off('close', clientClosed);
    // The tape is lost, visibly: the client's stream breaks instead of ending cleanly.
    b.ctx.emu.logger.error({ err }, 'tapes: a streamed exchange could not be written');
    entry?.noteTape({ recorded: false, problem: `the tape could not be written (${(err as Error).message})` });
    out.destroy(err as Error);
  }
}

/** Every absolute http(s) link inside a value, JSON text inside a string included. */
function linksIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    if (/^https?:\/\/\S+$/.test(value)) into.add(value);
    else {
      const inner = embeddedJson(value);
      if (inner !== undefined) linksIn(inner, into);
    }
  } else if (Array.isArray(value)) for (const v of value) linksIn(v, into);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) linksIn(v, into);
  return into;
}

/** Fetches the links the answer handed out, while they still work; a link that cannot be fetched is left as it is. */
async function fetchDownloads(b: Base, answer: unknown): Promise<TapeDownload[]> {
  const out: TapeDownload[] = [];
  for (const url of linksIn(answer)) {
    const got = await b.ctx.upstream.download(url);
    if (!got) continue;
    const ext = extensionOf(got.contentType) === 'bin' ? sniffExtension(got.bytes) : extensionOf(got.contentType);
    out.push({ url, status: got.status, content_type: got.contentType, file: { $file: await b.ctx.store.putFile(got.bytes, ext), encoding: 'raw' } });
  }
  return out;
}

/** The tape made, checked against the format, scrubbed of the key the client presented, written atomically. */
async function writeTape(b: Base, answer: TapeAnswer, downloads: TapeDownload[]): Promise<void> {
  const { ctx, req, ex } = b;
  const entry = req.ctx.entry;
  const put = (data: Uint8Array, ext: string) => ctx.store.putFile(data, ext);
  try {
    const request: TapeRequest =
      ex.body instanceof StreamedBody ? await streamedTapeRequest(req.raw, ex.body, ctx.store) : await tapeRequestOf(req.raw, ex.body, put);
    const declaration = declarationOf(ctx.options.declarations[ex.service], ex.operation);
    const account = ctx.options.perAccount ? (req.ctx.account?.id ?? null) : null;
    const key = matchKey(ex.service, ex.operation, account, request, declaration);
    const text = keyText(key);
    const seq = (ctx.recordedTimes.get(text) ?? 0) + 1;
    ctx.recordedTimes.set(text, seq);
    const id = tapeIdOf(ex.service, ex.operation, key, seq, sha256);
    const tape: Tape = {
      tape: 1,
      id,
      service: ex.service,
      operation: ex.operation,
      seq,
      account,
      // On the emulator clock: a frozen clock gives the same tape bytes for the same exchange.
      recorded_at: new Date(ctx.emu.clock.now()).toISOString(),
      upstream: ex.upstream,
      head_ms: b.headMs,
      request,
      answer,
      downloads,
    };
    // Whatever field carried it, the key the client presented never reaches the file.
    const clean = parseTape(`${id}.json`, withoutSecrets(JSON.stringify(tape), presentedSecrets(req.raw)));
    await ctx.store.writeTape(clean);
    ctx.index.add(clean, key);
    entry?.noteTape({ id, recorded: true });
  } catch (err) {
    entry?.noteTape({ recorded: false, problem: `the tape could not be written (${(err as Error).message})` });
    throw asTapeWrite(err);
  }
}

/** An error of a tape's write, marked so the hook tells it apart from the exchange's other failures. */
export class TapeWriteError extends Error {
  constructor(override readonly cause: Error) {
    super(`the tape could not be written (${cause.message})`);
    this.name = 'TapeWriteError';
  }
}

function asTapeWrite(err: unknown): TapeWriteError {
  return err instanceof TapeWriteError ? err : new TapeWriteError(err as Error);
}
