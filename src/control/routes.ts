/**
 * The control plane, mounted under /_emulator on every listener: health, reset, clock, accounts, state,
 * faults, journal, the latency report, metrics, verification and fixtures, one file per concern. Control calls are not
 * journaled and never see faults. Each route declares its zod schemas (body, query, params).
 */
import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import { accountRoutes } from './accounts.js';
import { clockRoutes } from './clock.js';
import { authorized, ControlError, type ControlInput } from './common.js';
import { faultRoutes } from './faults.js';
import { fixtureRoutes } from './fixtures.js';
import { healthRoutes } from './health.js';
import { hearRoutes } from './hear.js';
import { speakRoutes } from './speak.js';
import { journalRoutes } from './journal.js';
import { metricsRoutes } from './metrics.js';
import { reportRoutes } from './report.js';
import { resetRoutes } from './reset.js';
import { stateRoutes } from './state.js';
import { verifyRoutes } from './verify.js';
import { describeValue } from '../core/http/describe.js';
import { documentRoutes } from './documents.js';
import { liveJournal } from './live.js';
import { inspectorPages } from './pages.js';
import { acceptEmptyJson } from '../core/http/json-body.js';
import { SchemaRefusal } from '../core/http/schema-validator.js';
import { controlRefusal, tokenMatches } from './access.js';

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

type SchemaError = Error & { statusCode?: number };

export async function controlPlane(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;

  // Scoped to the control plane: an empty body with a JSON content type (curl -X POST -H 'Content-Type: application/json')
  // means "no body", and a body that is not JSON answers 400 naming the problem.
  acceptEmptyJson(app, (problem) => new ControlError(400, `body is not valid JSON: ${problem}`));

  // Only JSON bodies: a text/plain body is not silently read as a string.
  app.removeContentTypeParser('text/plain');

  // Probes (health, livez, readyz) answer without the token: they reveal nothing but status and version.
  app.addHook('onRequest', async (req) => {
    // Before the token: a page on another origin or a rebinding name is refused whatever it presents.
    const refusal = controlRefusal(emu.config, req);
    if (refusal) throw new ControlError(403, refusal);
    const control = req.routeOptions.config?.control;
    if (control?.public) return;
    // EventSource cannot send headers: the live journal feed takes the token as ?token= too.
    const token = emu.config.controlToken;
    const inQuery = (req.query as { token?: unknown }).token;
    if (control?.tokenInQuery && token && typeof inQuery === 'string' && tokenMatches(inQuery, token)) return;
    if (!authorized(emu, req)) throw new ControlError(401, 'control plane needs Authorization: Bearer <EMULATOR_CONTROL_TOKEN>');
  });

  app.setErrorHandler((err: SchemaError, req, reply) => {
    if (err instanceof ControlError) return reply.code(err.status).send({ ...err.extra, error: { message: err.message } });
    if (err instanceof SchemaRefusal && err.problem) {
      const first = err.problem;
      // A key's own `/` splits it, and an empty key is dropped, as the field has always been named.
      const path = first.path.join('/').split('/').filter(Boolean);
      const keys = first.keys;
      const field = [...path, ...(keys?.length ? [keys.join(', ')] : [])].join('.');
      const what = req.routeOptions.config?.control?.what ?? (err.validationContext === 'querystring' ? 'query' : (err.validationContext ?? 'request'));
      return reply.code(400).send({ error: { message: `${what}${field ? ` field ${field}` : ''}: ${first.rule}` } });
    }
    if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(400).send({ error: { message: `body must be JSON (Content-Type: application/json), not ${req.headers['content-type'] ?? '(none)'}` } });
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) emu.logger.error({ err }, 'control plane failure');
    const message = status === 400 && /JSON/i.test(err.message) ? `body is not valid JSON: ${err.message}` : err.message;
    return reply.code(status).send({ error: { message } });
  });

  // Unknown query parameters, and a body sent to a route that reads none, are 400 naming them.
  app.addHook('preValidation', async (req) => {
    if (req.is404) return;
    const accepts: ControlInput = req.routeOptions.config?.control ?? {};
    const unknown = Object.keys((req.query as Record<string, unknown> | undefined) ?? {}).filter((k) => !(accepts.query ?? []).includes(k));
    const where = `${req.method} ${req.url.split('?')[0]}`;
    if (unknown.length) {
      throw new ControlError(400, `${where}: unknown query parameter ${unknown.join(', ')} (accepted: ${accepts.query?.join(', ') || 'none'})`);
    }
    if (!accepts.body && req.body !== undefined && !isEmptyObject(req.body))
      throw new ControlError(400, `${where} takes no body (got ${describeValue(req.body)})`);
    // No body at all means "nothing to change": the route's body schema sees {}.
    if (accepts.body && req.body === undefined) req.body = {};
  });

  await app.register(inspectorPages);
  await app.register(liveJournal, { emu });
  await app.register(documentRoutes, { emu });

  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: { message: `no control route ${req.method} ${req.url.split('?')[0]}` } }));

  for (const routes of [
    healthRoutes,
    metricsRoutes,
    resetRoutes,
    clockRoutes,
    accountRoutes,
    stateRoutes,
    faultRoutes,
    journalRoutes,
    verifyRoutes,
    reportRoutes,
    fixtureRoutes,
    hearRoutes,
    speakRoutes,
  ]) {
    routes(app, emu);
  }
}
