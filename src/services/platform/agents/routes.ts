import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { takeFault } from '../../../core/http/request-context.js';
import { ok, PlatformError } from '../envelope.js';
import { acceptPlatformJson } from '../shared/json-body.js';
import { agentHeartbeat, agentStore, checkAgentSession, createAgentSession, endAgentSession, failAgentSession, registerAgentRooms } from './model.js';
import { createBody, sessionQuery } from './schema.js';

const BASE = '/api/v1/agents/openapi/sessions';

/** Agent sessions (family `agent`: 10001 params, 10003 key, 10004 capability/project, 10002 unknown). */
export async function agentRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  agentStore(emu);
  registerAgentRooms(emu);
  acceptPlatformJson(app);
  const r = app.withTypeProvider<ZodTypeProvider>();
  const config = { family: 'agent', capability: 'agents' } as const;

  // An injected error (fault `code`/`status`) on a heartbeat or check fails the session it names.
  app.addHook('onError', async (req, _reply, err) => {
    const account = req.ctx?.account;
    if (!account || !(err instanceof PlatformError)) return;
    if (!req.ctx.faultUsed?.has('code') && !req.ctx.faultUsed?.has('status')) return;
    if (req.method === 'DELETE' || (!req.url.startsWith(`${BASE}/heartbeat`) && !req.url.startsWith(`${BASE}/check`))) return;
    const id = (req.query as Record<string, unknown> | undefined)?.session_id;
    if (typeof id === 'string' && id.trim()) failAgentSession(emu, account, id.trim());
  });

  r.post(`${BASE}/create`, { config, schema: { body: createBody } }, async (req) => {
    const header = req.headers['idempotency-key'];
    const { item, traceId } = await createAgentSession(emu, req.ctx.account!, req.body, Array.isArray(header) ? header[0] : header);
    req.ctx.entry?.setNote(`traceId: ${traceId}`);
    return ok({ item });
  });

  r.get(`${BASE}/check`, { config, schema: { querystring: sessionQuery } }, async (req) =>
    ok({ item: checkAgentSession(emu, req.ctx.account!, req.query.session_id) }),
  );

  r.post(`${BASE}/heartbeat`, { config, schema: { querystring: sessionQuery } }, async (req) => {
    const id = req.query.session_id;
    // A close_ws fault stands for the room dropping: the session fails, the heartbeat reports it.
    if (takeFault(req, 'close_ws') !== undefined) failAgentSession(emu, req.ctx.account!, id);
    return ok({ item: agentHeartbeat(emu, req.ctx.account!, id) });
  });

  r.delete(`${BASE}/end`, { config, schema: { querystring: sessionQuery } }, async (req) =>
    ok({ item: endAgentSession(emu, req.ctx.account!, req.query.session_id) }),
  );
}
