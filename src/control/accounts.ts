/** `PUT|GET /_emulator/accounts/{key}`: settings of one key (balance, capabilities, project, limits). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { accountView } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { ControlError, input, keyParam } from './common.js';

const keyParams = z.object({ key: z.string() });
type KeyRequest = FastifyRequest<{ Params: { key: string } }>;

export function accountRoutes(app: FastifyInstance, emu: Emulator): void {
  // The settings' schema reads the capabilities and settings the services registered.
  const accountBody = emu.accounts.schemas.change;
  app.put('/accounts/:key', { ...input({ body: true, what: 'account' }), schema: { params: keyParams, body: accountBody } }, async (req: KeyRequest) => {
    const body = req.body as z.output<typeof accountBody>;
    const limits = body.limits ? Object.fromEntries(Object.entries(body.limits).map(([k, v]) => [k, v === null ? undefined : v])) : undefined;
    const account = emu.accounts.put(keyParam(req.params.key, 'account key'), { ...body, limits });
    emu.markDirty('accounts', account.id, account.id);
    return accountView(account);
  });

  app.get('/accounts/:key', { ...input({}), schema: { params: keyParams } }, async (req: KeyRequest) => {
    const account = emu.accounts.peek(keyParam(req.params.key, 'account key'));
    if (!account) throw new ControlError(404, 'no such account (strict keys are on and this key is not listed)');
    return accountView(account);
  });
}
