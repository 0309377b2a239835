import type { FastifyInstance } from 'fastify';
import { PlatformError } from '../envelope.js';

/**
 * JSON bodies of the session operations (calls, sessions, agents). Clients send `Content-Type:
 * application/json` on every call (the agent spec asks for it), also on DELETE/heartbeat requests
 * that carry nothing: an empty body is
 * read as "no body" instead of Fastify's empty-body error. Applies to the plugin it is called in only.
 */
export function acceptEmptyJson(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new PlatformError('param', `request body is not valid JSON (${(err as Error).message})`), undefined);
    }
  });
}
