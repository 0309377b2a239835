/** `/_emulator/faults`: queued and probabilistic fault rules, listed, added and deleted. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { accountId, redactKey } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { faultRuleSchema, type FaultRule } from '../core/faults/faults.js';
import { ControlError, input, keyParam } from './common.js';

const ruleView = (r: FaultRule) => ({
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

export function faultRoutes(app: FastifyInstance, emu: Emulator): void {
  app.post('/faults', { ...input({ body: true, what: 'fault rule' }), schema: { body: faultRuleSchema } }, async (req, reply) => {
    const body = req.body as z.output<typeof faultRuleSchema>;
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
  app.delete('/faults/:id', { ...input({}), schema: { params: z.object({ id: z.string() }) } }, async (req: FastifyRequest<{ Params: { id: string } }>) => {
    if (!emu.faults.remove(req.params.id)) throw new ControlError(404, `no fault rule ${req.params.id}`);
    return { deleted: req.params.id };
  });
}
