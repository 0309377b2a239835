/**
 * `POST /_emulator/reset`: drops resources, sessions, faults and journal (all, or one account's with
 * `?account=`). Fixtures set at run time stay unless `?fixtures=true` restores the start-up files.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { accountId, redactKey } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { input, keyParam } from './common.js';
import { restoreFixtures } from './fixtures.js';

const resetQuery = z
  .object({
    account: z.string().optional(),
    fixtures: z.enum(['true', 'false']).optional(),
  })
  .strict();

export function resetRoutes(app: FastifyInstance, emu: Emulator): void {
  app.post(
    '/reset',
    { ...input({ query: ['account', 'fixtures'], what: 'reset query' }), schema: { querystring: resetQuery } },
    async (req: FastifyRequest<{ Querystring: z.output<typeof resetQuery> }>, reply) => {
      const fixtures = req.query.fixtures === 'true';
      if (req.query.account !== undefined) {
        const key = keyParam(String(req.query.account), 'query account');
        emu.reset(accountId(key));
        return reply.code(200).send({ reset: 'account', account: redactKey(key) });
      }
      // Fixtures first: the accounts rebuilt by the reset read the restored accounts file.
      const restored = fixtures ? restoreFixtures(emu) : [];
      emu.reset();
      return reply.code(200).send({ reset: 'all', ...(fixtures ? { fixtures_restored: restored } : {}) });
    },
  );
}
