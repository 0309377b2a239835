/**
 * CORS on every listener, so a web app in development can call the emulator from its own origin.
 * `origins` empty means any origin (`*`); a list restricts answers and WebSocket upgrades to it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const CORS_METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS';
export const CORS_ALLOWED_HEADERS = 'Authorization,X-API-Key,Content-Type,Idempotency-Key,X-Emulator-Fault,Accept,Range';
/** Headers our answers carry that a page may read (fetch hides the rest). */
export const CORS_EXPOSED_HEADERS =
  'Trace-Id,Minimax-Request-Id,X-Audio-Sample-Rate,X-Audio-Channels,X-Audio-Bit-Depth,X-Emulator-Fault-Ignored,X-Emulator-Request-Id,Content-Length,Content-Disposition';
const MAX_AGE_S = 600;

export function originAllowed(origins: string[], origin: string | undefined): boolean {
  if (origins.length === 0 || origin === undefined) return true;
  return origins.includes(origin);
}

/**
 * The headers of one answer, for paths that write without Fastify's hooks (router errors) and for
 * replies that hijack the raw response (event streams).
 */
export function corsHeaders(origins: string[], origin: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'access-control-expose-headers': CORS_EXPOSED_HEADERS };
  if (origins.length === 0) headers['access-control-allow-origin'] = '*';
  else {
    headers.vary = 'Origin';
    if (origin !== undefined && origins.includes(origin)) headers['access-control-allow-origin'] = origin;
  }
  return headers;
}

/** Answers a WebSocket upgrade from an origin that is not configured (before the upgrade happens). */
export type RefuseOrigin = (req: FastifyRequest, reply: FastifyReply, message: string) => unknown;

/**
 * CORS for one service: the headers on every answer, and the preflight answer (204), from one
 * `onRequest` hook registered before the request pipeline, so a preflight is neither journaled nor
 * charged a queued fault.
 */
export async function installCors(app: FastifyInstance, origins: string[], refuseOrigin: RefuseOrigin): Promise<void> {
  // Any origin: the same headers on every answer, built once.
  const anyOrigin = origins.length === 0 ? Object.entries(corsHeaders(origins, undefined)) : null;
  app.addHook('onRequest', (req, reply, done) => {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const headers = anyOrigin ?? Object.entries(corsHeaders(origins, origin));
    // On the reply, not the raw response: a header set on the raw response sends every later header
    // down Node's slow merging path. A reply that hijacks the response writes reply.getHeaders() itself.
    for (const [k, v] of headers) reply.header(k, v);
    if (req.raw.method !== 'OPTIONS') return done();
    // A preflight, also a bare OPTIONS without Origin (never a text/plain 400 in no service's shape).
    // A page from an origin not listed gets no allow-origin: its browser refuses the call.
    void reply
      .code(204)
      .headers({
        'access-control-allow-methods': CORS_METHODS,
        'access-control-allow-headers': CORS_ALLOWED_HEADERS,
        'access-control-max-age': String(MAX_AGE_S),
        'content-length': '0',
      })
      .send();
  });
  // The router needs a route for OPTIONS on every path; the hook above answers before it runs.
  app.options('*', { schema: { hide: true } }, (_req, reply) => reply.code(204).send());
  // Any origin may open a socket when no list is set: the check exists only with a list.
  if (origins.length === 0) return;
  // After onRequest, so the WebSocket plugin has marked the request and cleans the socket up after the refusal.
  app.addHook('preValidation', async (req, reply) => {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    if (String(req.headers.upgrade ?? '').toLowerCase() === 'websocket' && !originAllowed(origins, origin)) {
      await refuseOrigin(req, reply, `WebSocket origin ${origin} is not allowed (EMULATOR_CORS_ORIGINS: ${origins.join(', ')})`);
      return reply;
    }
  });
}
