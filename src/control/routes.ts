import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { accountView, CAPABILITIES, redactKey } from '../core/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { faultRuleSchema } from '../core/faults.js';
import { accountId } from '../core/accounts.js';
import { VERSION } from '../version.js';
import { describeValue } from '../core/describe.js';

/**
 * The control plane, mounted under /_emulator on every listener: health, reset, clock, accounts, state,
 * faults and journal. Control calls are not journaled and never see faults.
 */
class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A key named on the control plane, trimmed as the services trim presented keys. */
function keyParam(value: string, what: string): string {
  const key = value.trim();
  if (!key) throw new ControlError(400, `${what} must be a non-empty key`);
  return key;
}

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  // No body means "nothing to change"; a JSON null is a body, and not an object.
  const r = schema.safeParse(value === undefined ? {} : value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const keys = (issue as { keys?: string[] }).keys;
  const field = [...issue.path, ...(keys ? [keys.join(', ')] : [])].join('.');
  throw new ControlError(400, `${what}${field ? ` field ${field}` : ''}: ${issue.message}`);
}

const clockBody = z
  .object({
    advance_ms: z.number().int().min(0).optional(),
    freeze: z.boolean().optional(),
    set_ms: z.number().int().min(0).optional(),
  })
  .strict();

const accountBody = z
  .object({
    balance_micro: z.int().min(0).optional(),
    free_call_seconds: z.number().min(0).optional(),
    capabilities: z.array(z.enum(CAPABILITIES)).optional(),
    project: z.string().min(1).optional(),
    disabled: z.boolean().optional(),
    real_name_verified: z.boolean().optional(),
    limits: z
      .object({
        requests_per_minute: z.int().min(1).nullable().optional(),
        characters_per_minute: z.int().min(1).nullable().optional(),
        max_concurrent_calls: z.int().min(1).nullable().optional(),
        single_channel: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const journalQuery = z
  .object({
    limit: z.coerce.number().int().min(1).optional(),
    path: z.string().optional(),
    account: z.string().optional(),
  })
  .strict();

/** What a control route accepts besides its own schema: query parameters, and whether it reads a body. */
type ControlInput = { query?: string[]; body?: boolean };
const input = (control: ControlInput) => ({ config: { control } });

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

export async function controlPlane(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;

  // Scoped to the control plane: an empty body with a JSON content type (curl -X POST -H 'Content-Type: application/json')
  // means "no body", and a body that is not JSON answers 400 naming the problem.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new ControlError(400, `body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });

  // Only JSON bodies: a text/plain body is not silently read as a string.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (req) => {
    const token = emu.config.controlToken;
    if (!token) return;
    if (req.headers.authorization !== `Bearer ${token}`) throw new ControlError(401, 'control plane needs Authorization: Bearer <EMULATOR_CONTROL_TOKEN>');
  });

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    if (err instanceof ControlError) return reply.code(err.status).send({ error: { message: err.message } });
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
    if (!accepts.body && req.body !== undefined && !isEmptyObject(req.body)) throw new ControlError(400, `${where} takes no body (got ${describeValue(req.body)})`);
  });

  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: { message: `no control route ${req.method} ${req.url.split('?')[0]}` } }));

  app.get('/health', input({}), async () => ({
    status: 'ok',
    version: VERSION,
    services: { speech: emu.urls.speech, speech_backup: emu.urls.speechBackup, platform: emu.urls.platform },
  }));

  app.post('/reset', input({ query: ['account'] }), async (req: FastifyRequest<{ Querystring: { account?: string } }>, reply) => {
    if (req.query.account !== undefined) {
      const key = keyParam(String(req.query.account), 'query account');
      emu.reset(accountId(key));
      return reply.code(200).send({ reset: 'account', account: redactKey(key) });
    }
    emu.reset();
    return reply.code(200).send({ reset: 'all' });
  });

  const clockView = () => ({ now_ms: emu.clock.now(), frozen: emu.clock.frozen });
  app.get('/clock', input({}), async () => clockView());
  app.post('/clock', input({ body: true }), async (req) => {
    const body = parse(clockBody, req.body, 'clock');
    if (body.freeze === true) emu.clock.freeze(true);
    if (body.set_ms !== undefined) emu.clock.set(body.set_ms);
    if (body.advance_ms !== undefined) emu.clock.advance(body.advance_ms);
    if (body.freeze === false) emu.clock.freeze(false);
    emu.markDirty();
    return clockView();
  });

  app.put('/accounts/:key', input({ body: true }), async (req: FastifyRequest<{ Params: { key: string } }>) => {
    const body = parse(accountBody, req.body, 'account');
    const limits = body.limits
      ? Object.fromEntries(Object.entries(body.limits).map(([k, v]) => [k, v === null ? undefined : v]))
      : undefined;
    const account = emu.accounts.put(keyParam(req.params.key, 'account key'), { ...body, limits });
    emu.markDirty();
    return accountView(account);
  });

  app.get('/accounts/:key', input({}), async (req: FastifyRequest<{ Params: { key: string } }>) => {
    const account = emu.accounts.peek(keyParam(req.params.key, 'account key'));
    if (!account) throw new ControlError(404, 'no such account (strict keys are on and this key is not listed)');
    return accountView(account);
  });

  app.get('/state', input({}), async () => {
    const accounts = emu.accounts.all().map((a) => {
      const resources: Record<string, unknown> = {};
      for (const area of emu.areas.values()) if (area.view) resources[area.name] = area.view(a.id);
      return {
        ...accountView(a),
        resources,
        open_websockets: emu.sockets.list(a.id).map((s) => ({ path: s.path, opened_at_ms: s.openedAtMs })),
        pending_timers: emu.clock.pending(a.id).map((t) => ({ label: t.label, due_ms: t.dueMs })),
      };
    });
    return {
      now_ms: emu.clock.now(),
      frozen: emu.clock.frozen,
      accounts,
      totals: {
        open_websockets: emu.sockets.list().length,
        pending_timers: emu.clock.pending().length,
        journal_entries: emu.journal.size(),
        fault_rules: emu.faults.list().length,
        signature_records: emu.signatures.size(),
      },
    };
  });

  const ruleView = (r: ReturnType<typeof emu.faults.list>[number]) => ({
    id: r.id,
    service: r.service,
    method: r.method,
    path: r.path,
    account: r.accountLabel,
    times: r.times,
    probability: r.probability,
    fault: r.fault,
    remaining: r.remaining,
  });

  app.post('/faults', input({ body: true }), async (req, reply) => {
    const body = parse(faultRuleSchema, req.body, 'fault rule');
    const key = body.account === undefined ? undefined : keyParam(body.account, 'fault rule field account');
    const account = key ? { id: accountId(key), label: redactKey(key) } : undefined;
    const rule = emu.faults.add(body, account);
    return reply.code(201).send({ id: rule.id, rule: ruleView(rule) });
  });
  app.get('/faults', input({}), async () => ({ rules: emu.faults.list().map(ruleView) }));
  app.delete('/faults', input({}), async () => {
    emu.faults.clear();
    return { deleted: 'all' };
  });
  app.delete('/faults/:id', input({}), async (req: FastifyRequest<{ Params: { id: string } }>) => {
    if (!emu.faults.remove(req.params.id)) throw new ControlError(404, `no fault rule ${req.params.id}`);
    return { deleted: req.params.id };
  });

  app.get('/journal', input({ query: ['limit', 'path', 'account'] }), async (req) => {
    const q = parse(journalQuery, req.query, 'journal query');
    const entries = emu.journal.list({ limit: q.limit, path: q.path, accountId: q.account !== undefined ? accountId(keyParam(q.account, 'journal query account')) : undefined });
    return { entries: entries.map(({ accountId: _hidden, ...e }) => e) };
  });
  app.delete('/journal', input({}), async (_req, reply: FastifyReply) => {
    emu.journal.clear();
    return reply.code(200).send({ deleted: 'all' });
  });
}
