/**
 * The error handler and the not-found handler every service installs: one order of checks (unknown
 * route, the service's own error, a data dir failure, a schema refusal, an unreadable body, anything
 * else), each answered in the service's own shape through the renderers it passes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyBodyError, type BodyError } from './body-errors.js';
import type { Logger } from 'pino';
import { journalOversizeBody } from '../journal/summaries.js';
import { pathOf } from './request-context.js';
import { StorageError } from '../state/storage.js';

export type HandledError = Error & { statusCode?: number; code?: string; validation?: unknown };

/** How one service words and sends each kind of failure. */
export interface ErrorRenderers<E extends Error> {
  /** Names the log line of an unexpected failure (`<service> handler failed`). */
  service: string;
  /** The answer to an unknown route, given its text. */
  notFound(req: FastifyRequest, reply: FastifyReply, message: string): FastifyReply;
  /** The service's own error class: an error of it is sent as it is. */
  ownError: abstract new (...args: never[]) => E;
  send(req: FastifyRequest, reply: FastifyReply, err: E): FastifyReply;
  /** The internal error: with the data dir's message, or (none given) the service's usual text. */
  internal(message?: string): E;
  bodyError(req: FastifyRequest, err: BodyError): E;
  /**
   * A route's schema refusal, for a service that words it; checked before body errors because Fastify
   * gives both a 400.
   */
  schemaError?(err: HandledError): E | undefined;
}

export function installErrorHandler<E extends Error>(app: FastifyInstance, emu: { readonly logger: Logger }, renderers: ErrorRenderers<E>): void {
  const notFound = (req: FastifyRequest, reply: FastifyReply) =>
    renderers.notFound(req, reply, `not found: no operation at ${req.method} ${req.url.split('?')[0]}`);

  const answerError = (err: HandledError, req: FastifyRequest, reply: FastifyReply) => {
    // A body that failed to parse on an unknown route is still an unknown route: 404, not a body error.
    if (req.is404) return notFound(req, reply);
    if (err instanceof renderers.ownError) return renderers.send(req, reply, err);
    // The data dir could not keep or give back what the request needs: the internal error, saying what.
    if (err instanceof StorageError) return renderers.send(req, reply, renderers.internal(err.message));
    const refused = renderers.schemaError?.(err);
    if (refused) return renderers.send(req, reply, refused);
    // A body that cannot be read: admission already let the request in (it runs before the body).
    const unreadable = classifyBodyError(err);
    if (unreadable?.kind === 'too_large') journalOversizeBody(req);
    if (unreadable) return renderers.send(req, reply, renderers.bodyError(req, unreadable));
    emu.logger.error({ err, path: pathOf(req) }, `${renderers.service} handler failed`);
    return renderers.send(req, reply, renderers.internal());
  };
  // Nothing is returned: the answer is already sent, and Fastify would await a returned reply as a thenable.
  app.setErrorHandler((err: HandledError, req, reply) => void answerError(err, req, reply));
  app.setNotFoundHandler(notFound);
}
