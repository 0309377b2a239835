/**
 * JSON bodies that may be empty. Clients send `Content-Type: application/json` on calls that carry
 * nothing (DELETE, heartbeats, `curl -X POST -H 'Content-Type: application/json'`): an empty body is read
 * as "no body" instead of Fastify's empty-body error, and a body that is not JSON is refused in the
 * caller's own shape. Applies to the plugin it is called in only.
 */
import type { FastifyInstance } from 'fastify';
import { journalBodyText } from './journal-summaries.js';

export function acceptEmptyJson(app: FastifyInstance, refuse: (problem: string) => Error): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = String(body).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      // Not JSON: the journal still shows what arrived, as bounded text.
      journalBodyText(req, text);
      done(refuse((err as Error).message), undefined);
    }
  });
}
