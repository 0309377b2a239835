import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { takeFault } from '../../../core/http/request-context.js';
import { ok } from '../envelope.js';
import { acceptPlatformJson } from '../shared/json-body.js';
import { callStore, endAbnormally, registerCallRooms, heartbeat, startCall, stopCall } from './model.js';
import { heartbeatBody, startBody, stopBody } from './schema.js';

/** Real-time call sessions: `/v1/audio/assistant/start | heartbeat | stop` (family `call`). */
export async function callRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  callStore(emu);
  registerCallRooms(emu);
  acceptPlatformJson(app);
  const r = app.withTypeProvider<ZodTypeProvider>();
  const config = { family: 'call', capability: 'calls' } as const;

  r.post('/v1/audio/assistant/start', { config, schema: { body: startBody } }, async (req) => {
    return ok(await startCall(emu, req.ctx.account!, req.body));
  });

  r.post('/v1/audio/assistant/heartbeat', { config, schema: { body: heartbeatBody } }, async (req) => {
    const account = req.ctx.account!;
    // A close_ws fault stands for the room dropping: the session ends abnormally before this heartbeat.
    if (takeFault(req, 'close_ws') !== undefined) endAbnormally(emu, account, req.body.session_id);
    return ok(heartbeat(emu, account, req.body.session_id));
  });

  r.post('/v1/audio/assistant/stop', { config, schema: { body: stopBody } }, async (req) => {
    // `reason` is for logs and statistics only: it goes to the journal, nowhere else.
    if (req.body.reason) req.ctx.entry?.setNote(`stop reason: ${req.body.reason}`);
    return ok(stopCall(emu, req.ctx.account!, req.body.session_id));
  });
}
