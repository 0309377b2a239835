/**
 * How a service's JSON parser treats a body that is not JSON: it is refused as the service words it,
 * and the journal still shows what arrived, as bounded text (both parsers below share that step).
 * Each applies to the plugin it is called in only.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { journalBodyText } from '../journal/summaries.js';

/** The text of a body the parser refused, on the request's journal entry (an empty body has nothing to show). */
function journalUnparsed(req: FastifyRequest, text: string): void {
  if (text.length > 0) journalBodyText(req, text);
}

/**
 * Fastify's own JSON parser (its body limit, prototype-poisoning checks, error codes and messages,
 * which the service's error handler words), with a body it refuses journaled as text.
 */
export function journalRefusedJson(app: FastifyInstance): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err, value) => {
      if (err) journalUnparsed(req, body as string);
      done(err, value);
    });
  });
}

/**
 * JSON bodies that may be empty. Clients send `Content-Type: application/json` on calls that carry
 * nothing (DELETE, heartbeats, `curl -X POST -H 'Content-Type: application/json'`): an empty body is read
 * as "no body" instead of Fastify's empty-body error, and a body that is not JSON is refused in the
 * caller's own shape.
 */
export function acceptEmptyJson(app: FastifyInstance, refuse: (problem: string) => Error): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = String(body).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      journalUnparsed(req, text);
      done(refuse((err as Error).message), undefined);
    }
  });
}
