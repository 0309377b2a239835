/**
 * One control-plane call over fetch, bounded in time from the first byte sent to the last byte of the
 * body read: a server that never answers, or trickles its body, fails the call at its deadline. What
 * fails the call (no connection, the deadline, a body that is not JSON or not the expected shape, a
 * status other than 2xx) is a ControlClientError naming the URL and what came back.
 */
import { ControlClientError, VerificationError } from './errors.js';
import type { ControlReply, VerifyFailure } from './types.js';

export type Query = Record<string, string | number | boolean | string[] | undefined>;

/** Per-call options of every ControlClient method. */
export interface CallOptions {
  /** The whole call's deadline in ms (answer and body); the client's `timeoutMs` when not given. */
  timeoutMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Sees every answer as it came (before it is checked): status, headers, bytes, text, parsed body. */
  onReply?: (reply: ControlReply) => void;
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path under `/_emulator`, e.g. `/faults`. */
  path: string;
  query?: Query;
  /** A JSON body (any value but undefined), or raw bytes with their content type. */
  body?: unknown;
  raw?: { bytes: Uint8Array; contentType: string };
  /** Statuses answered without throwing (readyz's 503). */
  accept?: number[];
}

export interface Transport {
  baseUrl: string;
  token: string | undefined;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
}

/** The first characters of a text, on one line, to show what came back. */
export function excerpt(text: string, max = 120): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (!line) return 'an empty body';
  return JSON.stringify(line.length > max ? `${line.slice(0, max)}…` : line);
}

export function callUrl(t: Transport, call: Call): URL {
  const url = new URL(t.baseUrl + call.path);
  for (const [k, v] of Object.entries(call.query ?? {})) {
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, item);
    else if (v !== undefined) url.searchParams.set(k, String(v));
  }
  return url;
}

/**
 * Sends one call and reads its whole answer within the deadline; answers it whatever its status
 * (a status check is the caller's: see `expectOk`). Throws a ControlClientError with status 0 when
 * no whole answer came (no connection, the deadline, a cancel).
 */
export async function send(t: Transport, call: Call, options: CallOptions = {}): Promise<ControlReply> {
  const url = callUrl(t, call);
  const request = `${call.method} ${url.pathname}`;
  const timeoutMs = options.timeoutMs ?? t.timeoutMs;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (t.token !== undefined) headers.authorization = `Bearer ${t.token}`;
  let body: NonNullable<Parameters<typeof globalThis.fetch>[1]>['body'];
  if (call.raw) {
    headers['content-type'] = call.raw.contentType;
    body = call.raw.bytes;
  } else if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.body);
  }
  const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  let status = 0;
  try {
    const res = await t.fetch(url, { method: call.method, headers, body, signal });
    status = res.status;
    // The body is read under the same signal: a trickling body ends at the deadline too.
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (a proxy's page): `body` stays undefined, `text` holds it.
    }
    const reply: ControlReply = { status: res.status, headers: res.headers, bytes, text, body: parsed, url: url.href, request };
    options.onReply?.(reply);
    return reply;
  } catch (err) {
    const during = status ? `the body of a ${status} answer` : 'an answer';
    let why: string;
    if (timeout.aborted) why = `no whole answer within ${timeoutMs} ms (waiting for ${during})`;
    else if (options.signal?.aborted) why = `cancelled while waiting for ${during}`;
    else why = `no answer: ${describeFailure(err)}`;
    throw new ControlClientError(0, why, undefined, request, url.href);
  }
}

/** The cause of a failed fetch in words (undici hides the socket error under `cause`). */
function describeFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` (${cause.message})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

/** Throws the control plane's refusal unless the answer is 2xx (or an accepted status). */
export function expectOk(reply: ControlReply, call: Call): ControlReply {
  if ((reply.status >= 200 && reply.status < 300) || call.accept?.includes(reply.status)) return reply;
  const body = reply.body === undefined ? reply.text : reply.body;
  const message = (reply.body as { error?: { message?: unknown } } | null | undefined)?.error?.message;
  const plain = (reply.body as { error?: unknown } | null | undefined)?.error;
  const detail =
    typeof message === 'string'
      ? message
      : typeof plain === 'string'
        ? plain
        : `${reply.status} answer ${reply.body === undefined ? `that is not JSON: ${excerpt(reply.text)}` : `without a message: ${excerpt(reply.text)}`}`;
  if (reply.status === 409 && call.path === '/verify' && isVerifyFailure(reply.body)) {
    throw new VerificationError(reply.status, detail, reply.body, reply.request, reply.url);
  }
  throw new ControlClientError(reply.status, detail, body, reply.request, reply.url);
}

function isVerifyFailure(body: unknown): body is VerifyFailure {
  const b = body as VerifyFailure | null;
  return typeof b === 'object' && b !== null && typeof b.count === 'number' && Array.isArray(b.near_misses);
}

/**
 * The parsed JSON of a 2xx answer, checked to be the shape the method promises (`what` names it): a
 * wrong URL that answers 200 with HTML or `null` fails here instead of passing.
 */
export function expectShape<T>(reply: ControlReply, what: string, holds: (body: any) => boolean): T {
  if (reply.body === undefined) {
    const type = reply.headers.get('content-type') ?? 'no content type';
    throw new ControlClientError(
      reply.status,
      `expected ${what}, got a body that is not JSON (${type}): ${excerpt(reply.text)} — is this the URL of an emulator?`,
      reply.text,
      reply.request,
      reply.url,
    );
  }
  let ok = false;
  try {
    ok = reply.body !== null && typeof reply.body === 'object' && holds(reply.body);
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new ControlClientError(
      reply.status,
      `expected ${what}, got ${excerpt(reply.text)} — is this the URL of an emulator?`,
      reply.body,
      reply.request,
      reply.url,
    );
  }
  return reply.body as T;
}
