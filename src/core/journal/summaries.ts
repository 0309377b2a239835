/**
 * What the journal shows of a request and its answer, secrets redacted: the request part of a new
 * entry (headers and query summarized on first read), the body once parsed, and the answer as it
 * leaves. The summarizers are module-level functions: no closure is made per request.
 */
import type { FastifyRequest } from 'fastify';
import { redactKey } from '../state/accounts.js';
import type { FaultDirective, FaultField } from '../faults/faults.js';
import { FaultRecord } from './fault.js';
import { JournalRequest, summarize, type JournalEntry } from './journal.js';
import { detached } from './value.js';

/** Headers that carry credentials under any scheme (docs/control-plane.md lists them). */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'sec-websocket-protocol',
  'x-auth-token',
  'x-access-token',
  'x-amz-security-token',
  'x-goog-api-key',
]);
/** Any other header whose name says it holds a credential. */
const SECRET_NAME = /token|secret|key|auth|cookie|passw|session|credential|signature/i;

function isSecretHeader(name: string): boolean {
  return SECRET_HEADERS.has(name) || SECRET_NAME.test(name);
}

function journalHeaders(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const s = Array.isArray(v) ? v.join(', ') : String(v);
    out[k] = isSecretHeader(k) ? redactSecret(s) : s;
  }
  return out;
}

/** A credential shown by its scheme word (Bearer, Basic, Token…) and the redacted label of the rest; each item of a list apart. */
function redactSecret(value: string): string {
  return value
    .split(',')
    .map((item) => {
      const m = /^(\s*[A-Za-z][\w.-]*\s+)(\S.*)$/.exec(item);
      if (m) return `${m[1]}${redactKey(m[2]!.trim())}`;
      // A scheme with no credential after it (`Bearer `) has nothing to hide.
      if (/^\s*[A-Za-z][\w.-]*\s+$/.test(item)) return item;
      const lead = /^\s*/.exec(item)![0];
      return item.trim() ? `${lead}${redactKey(item.trim())}` : item;
    })
    .join(',');
}

/** A header's value as the journal shows it (a credential redacted): verify compares an expected header so. */
export function journalHeaderValue(name: string, value: string): string {
  return isSecretHeader(name) ? redactSecret(value) : value;
}

function journalQuery(q: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!q || Object.keys(q).length === 0) return undefined;
  return summarize(q, redactKey) as Record<string, unknown>;
}

/** Headers and query of a journal entry as shown (the entry keeps the plain objects until it is read). */
function summarizeRequest(headers: Record<string, unknown>, query: unknown): { headers: Record<string, string>; query?: Record<string, unknown> } {
  return { headers: journalHeaders(headers as FastifyRequest['headers']), query: journalQuery(query as Record<string, unknown> | undefined) };
}

function summarizeBody(body: unknown): unknown {
  return summarize(body, redactKey);
}

function jsonSummary(payload: string): unknown {
  try {
    return summarize(JSON.parse(payload), redactKey);
  } catch {
    return { bytes: Buffer.byteLength(payload) };
  }
}

/** The request part of a new entry: the plain header and query objects only, never the request (and its socket). */
export function journalRequest(req: FastifyRequest): JournalRequest {
  return new JournalRequest(req.headers, req.query, summarizeRequest);
}

/** Bodies up to this size are kept as parsed until the journal is read. */
const LAZY_BODY_MAX_BYTES = 16 * 1024;

/** Records the parsed body once (the lifecycle does it right after parsing, before validation). */
export function journalBody(req: FastifyRequest): void {
  const entry = req.ctx?.entry;
  if (!entry) return;
  if (req.body === undefined) return journalStreamedBody(req);
  // A small body is summarized when the journal is read; a large one at once, so the entry never
  // holds a large parsed body.
  if (Number(req.headers['content-length']) <= LAZY_BODY_MAX_BYTES) entry.request.keepBody(req.body, summarizeBody);
  else entry.request.setBody(boundedSummary(summarize(req.body, redactKey)));
}

/** A multipart upload, which its route reads as a stream, is kept by its size and content type (as a refused one is). */
function journalStreamedBody(req: FastifyRequest): void {
  const type = req.headers['content-type'];
  if (!type || !/^multipart\//i.test(type)) return;
  const announced = Number(req.headers['content-length']);
  req.ctx!.entry!.request.setBody({ ...(Number.isSafeInteger(announced) && announced > 0 ? { bytes: announced } : {}), content_type: type });
}

/**
 * A large body's summary, held to LAZY_BODY_MAX_BYTES of JSON: a body of many small nested fields
 * stays large even summarized, and is then kept as the start of its summary's JSON (as a frame is).
 */
function boundedSummary(summary: unknown): unknown {
  if (summary === null || typeof summary !== 'object') return summary;
  const text = JSON.stringify(summary);
  return text.length <= LAZY_BODY_MAX_BYTES ? summary : `${text.slice(0, LAZY_BODY_MAX_BYTES)}…(${text.length} chars)`;
}

/** A body as text: its JSON summarized when it is JSON, else the text itself (bounded like any string). */
export function summarizeBodyText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return summarize(JSON.parse(trimmed), redactKey);
    } catch {
      // not JSON after all: kept as text
    }
  }
  return summarize(text, redactKey);
}

/** Records a body read as text: its JSON summary when it is JSON, else the text (bounded). Summarized on first read when small. */
export function journalBodyText(req: FastifyRequest, text: string): void {
  const entry = req.ctx?.entry;
  if (!entry) return;
  if (text.length <= LAZY_BODY_MAX_BYTES) entry.request.keepBody(text, summarizeBodyText as (v: unknown) => unknown);
  // A large JSON body is summarized as JSON too (verify matches its fields), now: the text is not held.
  else entry.request.setBody(boundedSummary(summarizeBodyText(text)));
}

/** Content types whose body the journal shows as text (JSON, forms, text); others by their size. */
const TEXT_BODY = /json|^text\/|x-www-form-urlencoded|xml/i;
/** Of a body that is not text, only its size is kept; of a text body over this size, its start as text. */
const TEXT_KEEP_BYTES = 1024 * 1024;

const FORM_BODY = /x-www-form-urlencoded/i;

/** The fields of a URL-encoded form, a repeated one as a list. */
function formFields(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** A refusal waits at most this long (wall time) for the rest of a body it journals: a client that stalls is still answered. */
const REFUSED_BODY_WAIT_MS = 2000;

/**
 * A request refused before its body was read (fault `code`/`status`, key, capability) still has its
 * body journaled: it is read here, up to the route's body limit (or for REFUSED_BODY_WAIT_MS), and
 * `then` renders the refusal once it ended. The answer does not change: only when it leaves.
 */
export function journalRefusedBody(req: FastifyRequest, bodyLimit: number, then: () => void): void {
  const entry = req.ctx?.entry;
  const raw = req.raw;
  const hasBody = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
  if (!entry || !hasBody || raw.readableEnded || raw.destroyed) return then();
  const type = String(raw.headers['content-type'] ?? '');
  const text = TEXT_BODY.test(type);
  const announced = Number(raw.headers['content-length']) || 0;
  // A text body announced over the limit: its size says enough, nothing of it is read. (The limit is
  // the text parsers'; a multipart upload or raw audio is streamed by its route under its own limits.)
  if (text && announced > bodyLimit) {
    journalOversizeBody(req, bodyLimit);
    return then();
  }
  const keep = text ? Math.min(bodyLimit, TEXT_KEEP_BYTES) : 0;
  const chunks: Buffer[] = [];
  let size = 0;
  let kept = 0;
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    raw.off('data', onData).off('end', finish).off('error', finish).off('close', finish);
    // What the rest of the body holds is dropped as it arrives (the answer may leave before it ends).
    raw.resume();
    if (!text) entry.request.setBody({ bytes: Math.max(size, announced), content_type: type || undefined });
    else if (size > bodyLimit) journalOversizeBody(req, bodyLimit);
    // A form's fields, so that a credential among them is redacted as in a JSON body (its text would show it).
    else if (FORM_BODY.test(type)) entry.request.setBody(boundedSummary(summarize(formFields(Buffer.concat(chunks).toString('utf8')), redactKey)));
    else if (size > keep) entry.request.setBody(summarize(Buffer.concat(chunks).toString('utf8'), redactKey));
    else journalBodyText(req, Buffer.concat(chunks).toString('utf8'));
    then();
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (kept < keep) {
      const piece = chunk.subarray(0, keep - kept);
      chunks.push(piece);
      kept += piece.length;
    }
    if (size > bodyLimit) finish();
  };
  const timer = setTimeout(finish, REFUSED_BODY_WAIT_MS).unref();
  raw.on('data', onData).on('end', finish).on('error', finish).on('close', finish);
}

/**
 * A body over the route's size limit, refused unread (or read only up to the limit): the entry keeps
 * its size as far as the client announced it (`Content-Length`; a chunked body has none) and the limit
 * it broke, so `verify` still finds the request by path and code.
 */
export function journalOversizeBody(req: FastifyRequest, bodyLimit = req.routeOptions.bodyLimit): void {
  const entry = req.ctx?.entry;
  if (!entry) return;
  const announced = Number(req.headers['content-length']);
  const type = req.headers['content-type'];
  entry.request.setBody({
    ...(Number.isSafeInteger(announced) && announced > 0 ? { bytes: announced } : {}),
    content_type: type || undefined,
    over_limit: true,
    limit: bodyLimit,
  });
}

/** The fault a request arrived with, on its entry: its origin and, as the endpoint takes them, the fields it expressed. */
export function recordFault(ctx: { entry: JournalEntry | null; faultUsed: Set<FaultField> | null }, directive: FaultDirective, origin: string): void {
  if (!ctx.entry) return;
  ctx.faultUsed ??= new Set();
  ctx.entry.setFault(new FaultRecord(origin, directive, ctx.faultUsed));
}

/** JSON answers up to this size are kept for a summary made on first read; larger ones show their size. */
const JSON_SUMMARY_MAX_CHARS = 65_536;

/** What an answer leaving through the lifecycle was: its content type and a summary of its payload. */
export function journalAnswer(entry: JournalEntry, contentType: string, payload: unknown): void {
  const type = contentType || undefined;
  if (typeof payload === 'string') {
    if (contentType.includes('json') && payload.length < JSON_SUMMARY_MAX_CHARS) entry.keepJsonAnswer(type, payload, jsonSummary);
    else {
      // Too large to summarize, but its trace id still names it (hear finds the answer by it) and its
      // spec code still counts (verify by code, metrics, the inspector).
      const json = contentType.includes('json');
      const traceId = json ? traceIdInLargeJson(payload) : undefined;
      entry.describeAnswer(type, traceId === undefined ? { bytes: Buffer.byteLength(payload) } : { bytes: Buffer.byteLength(payload), trace_id: traceId });
      const code = entry.response.code === undefined && json ? codeInLargeJson(payload) : undefined;
      if (code !== undefined) entry.setCode(code);
    }
  } else if (Buffer.isBuffer(payload)) entry.describeAnswer(type, { bytes: payload.length });
  else entry.describeAnswer(type, payload ? { stream: true } : undefined);
}

/** The `trace_id` of a JSON answer too large to summarize: the speech service writes it after the audio, near the end. */
export function traceIdInLargeJson(payload: string): string | undefined {
  const re = /"trace_id":\s*"([^"\\]{1,128})"/;
  const id = (re.exec(payload.slice(-512)) ?? re.exec(payload.slice(0, 512)))?.[1];
  // The entry outlives the answer: the id is copied, not kept as a view of the whole payload.
  return id === undefined ? undefined : detached(id);
}

/**
 * The spec code of a JSON answer too large to summarize, read where each family writes it: the speech
 * service's `base_resp` closes its answers, the platform's `error_code` opens its envelope.
 */
export function codeInLargeJson(payload: string): number | undefined {
  const speech = /"status_code":\s*(-?\d+)/.exec(payload.slice(-256));
  if (speech) return Number(speech[1]);
  const platform = /^\{\s*"error_code":\s*(-?\d+)/.exec(payload.slice(0, 64));
  return platform ? Number(platform[1]) : undefined;
}
