/**
 * A request as a tape holds it: its raw body read once (the emulator's own parsers never run for a request the tapes
 * answer), its credentials replaced by the marker, its body parsed into the tape's shape (JSON with audio as files,
 * a multipart form with its files by hash, text, or bytes).
 */
import type { IncomingMessage } from 'node:http';
import { CREDENTIAL_MARKER, extensionOf, type TapeBody, type TapeRequest } from './format.js';
import { externalize, type FilePut } from './body.js';

/** Headers that carry a credential: forwarded as they came, written as the marker. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'proxy-authorization', 'cookie']);
/** Query parameters that carry a credential. */
const CREDENTIAL_QUERY = new Set(['api_key', 'apikey', 'key', 'token', 'access_token']);
/** JSON fields that carry a credential (/mcp `arguments.apiKey`). */
export const CREDENTIAL_FIELDS = /^(api_?key|apikey|access_token|authorization|secret)$/i;
/** Headers a tape keeps of a request: the ones that give the body its meaning, and the credentials (as the marker). */
const KEPT_REQUEST_HEADERS = new Set(['content-type', 'accept', ...CREDENTIAL_HEADERS]);
/** Headers never forwarded: the connection's own, and the emulator's directives. */
export const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
  'content-length',
  'x-emulator-fault',
]);

/**
 * The largest multipart form the tapes read (streamed, never held whole): the largest upload either service accepts (a
 * platform video, 200 MB) and the form around it. A multipart route reads its form itself (its own limits per field),
 * so its Fastify body limit does not bound it; the service's own rules still judge the form when the emulator answers it.
 */
export const MULTIPART_LIMIT = 210 * 1000 * 1000;

/** The limit of a request's body: the route's own, or the multipart bound for a form. */
export function bodyLimitOf(raw: IncomingMessage, routeLimit: number): number {
  return /^multipart\/form-data/i.test(raw.headers['content-type'] ?? '') ? Math.max(routeLimit, MULTIPART_LIMIT) : routeLimit;
}

/**
 * The request's body as bytes (the whole of it: a request is bounded by its route's own limit). Past the limit, the
 * error the services answer as their own 413 (core/http/body-errors.ts); a client that leaves mid-body, the error
 * Fastify gives a body that broke off (a 400 nobody reads), never an unexpected failure.
 */
export async function readRawBody(raw: IncomingMessage, limit: number): Promise<Buffer> {
  const announced = Number(raw.headers['content-length']);
  if (announced > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of raw as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
    throw clientLeft((err as Error).message);
  }
  if (!raw.complete) throw clientLeft();
  return Buffer.concat(chunks);
}

/** The error of a body that broke off (Fastify's 400, which nobody reads: the client has gone). */
export function clientLeft(why?: string): Error {
  return Object.assign(new Error(`the client left before its request body was read${why ? ` (${why})` : ''}`), { statusCode: 400, code: 'CLIENT_LEFT' });
}

export function tooLarge(limit: number): Error {
  return Object.assign(new Error(`request body is too large (over ${limit} bytes)`), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
}

/** A query string as a record (repeated names as lists), credentials as the marker. */
export function queryOf(url: string): Record<string, string | string[]> {
  const q = url.indexOf('?');
  const out: Record<string, string | string[]> = {};
  if (q === -1) return out;
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    const v = CREDENTIAL_QUERY.has(name.toLowerCase()) ? CREDENTIAL_MARKER : value;
    const had = out[name];
    out[name] = had === undefined ? v : [had, v].flat();
  }
  return out;
}

/** The request's headers as a tape keeps them. */
export function keptHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !KEPT_REQUEST_HEADERS.has(name)) continue;
    out[name] = CREDENTIAL_HEADERS.has(name) ? CREDENTIAL_MARKER : [value].flat().join(', ');
  }
  return out;
}

/** A JSON value with every credential field as the marker. */
export function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = CREDENTIAL_FIELDS.test(k) && typeof v === 'string' ? CREDENTIAL_MARKER : withoutCredentials(v);
    return out;
  }
  return value;
}

/** The string values of every credential field inside a JSON value (a key a client sent inside a message). */
export function credentialValues(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) credentialValues(v, into);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (CREDENTIAL_FIELDS.test(k) && typeof v === 'string') into.push(v);
      else credentialValues(v, into);
    }
  return into;
}

/** A tape's text with every secret (as JSON escapes it) replaced by the marker. */
export function withoutSecrets(json: string, secrets: Iterable<string>): string {
  let out = json;
  for (const secret of secrets) if (secret.length >= 6) out = out.split(JSON.stringify(secret).slice(1, -1)).join(CREDENTIAL_MARKER);
  return out;
}

/** A body in the tape's shape, by its content type (a multipart form is never read whole: multipart.ts). */
export async function tapeBodyOf(raw: Buffer, contentType: string | undefined, put: FilePut): Promise<TapeBody> {
  if (raw.length === 0) return { none: true };
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      return { text: raw.toString('utf8') };
    }
    // Outside the parse's catch: a file that cannot be stored fails the tape, never turns its body into text.
    return { json: await externalize(withoutCredentials(parsed), put) };
  }
  if (type.startsWith('text/') || type.includes('x-www-form-urlencoded')) return { text: raw.toString('utf8') };
  return { file: { $file: await put(raw, extensionOf(contentType)), encoding: 'raw' } };
}

/** The request as a tape holds it, but its body: method, path, query and the headers kept. */
export function tapeRequestHead(raw: IncomingMessage): Omit<TapeRequest, 'body'> {
  const url = raw.url ?? '/';
  const q = url.indexOf('?');
  return { method: raw.method ?? 'GET', path: q === -1 ? url : url.slice(0, q), query: queryOf(url), headers: keptHeaders(raw.headers) };
}

/** The request as a tape holds it. */
export async function tapeRequestOf(raw: IncomingMessage, body: Buffer, put: FilePut): Promise<TapeRequest> {
  return { ...tapeRequestHead(raw), body: await tapeBodyOf(body, raw.headers['content-type'], put) };
}

/** The key the client presented (any credential header or query parameter), to make sure no file ever holds it. */
export function presentedSecrets(raw: IncomingMessage): string[] {
  const out: string[] = [];
  for (const name of CREDENTIAL_HEADERS) {
    const v = raw.headers[name];
    if (typeof v !== 'string') continue;
    out.push(v);
    const bearer = /^\s*bearer\s+(.+)$/i.exec(v);
    if (bearer) out.push(bearer[1]!.trim());
  }
  const url = raw.url ?? '';
  const q = url.indexOf('?');
  if (q !== -1) for (const [name, value] of new URLSearchParams(url.slice(q + 1))) if (CREDENTIAL_QUERY.has(name.toLowerCase())) out.push(value);
  return out.filter((s) => s.length >= 6);
}
