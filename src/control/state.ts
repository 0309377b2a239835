import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { sweepAccounts } from '../core/account-sweep.js';
import { accountView } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { input } from './common.js';

/** Accounts on one page of the state view unless `limit` says otherwise. */
export const STATE_PAGE_DEFAULT = 1000;
export const STATE_PAGE_MAX = 10_000;

const stateQuery = z.object({
  limit: z.coerce
    .number({ error: `must be a whole number from 1 to ${STATE_PAGE_MAX}` })
    .int({ error: `must be a whole number from 1 to ${STATE_PAGE_MAX}` })
    .min(1, { error: `must be a whole number from 1 to ${STATE_PAGE_MAX}` })
    .max(STATE_PAGE_MAX, { error: `must be a whole number from 1 to ${STATE_PAGE_MAX}` })
    .default(STATE_PAGE_DEFAULT),
  cursor: z
    .string()
    .regex(/^[0-9a-f]{16}$/, { error: 'must be the next_cursor of an earlier page' })
    .optional(),
});

/**
 * `GET /_emulator/state`: accounts with their resources, sockets and timers, a page at a time
 * (`?limit=`, then `?cursor=` with the page's `next_cursor`; accounts in a stable order), and totals.
 */
export function stateRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get('/state', { ...input({ query: ['limit', 'cursor'], what: 'state query' }), schema: { querystring: stateQuery } }, async (req) => {
    const { limit, cursor } = req.query as z.output<typeof stateQuery>;
    // Accounts that hold nothing are forgotten first: the view shows what the emulator keeps.
    sweepAccounts(emu);
    // Sockets and timers grouped by account in one pass each: a long run has thousands of accounts.
    const sockets = groupBy(emu.sockets.list(), (s) => s.accountId ?? undefined);
    const timers = groupBy(emu.clock.pending(), (t) => t.account);
    // The cursor is the id of the last account of the previous page: pages stay right when accounts come and go.
    const ordered = emu.accounts.all().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const from = cursor === undefined ? 0 : ordered.findIndex((a) => a.id > cursor);
    const all = from < 0 ? [] : ordered.slice(from, from + limit);
    const more = from >= 0 && from + limit < ordered.length;
    // Areas that can show every account in one pass do so once.
    const many = new Map([...emu.areas.values()].filter((area) => area.viewAll).map((area) => [area.name, area.viewAll!(all.map((a) => a.id))]));
    const accounts = all.map((a) => {
      const resources: Record<string, unknown> = {};
      for (const area of emu.areas.values()) if (area.view) resources[area.name] = many.has(area.name) ? many.get(area.name)!.get(a.id) : area.view(a.id);
      return {
        ...accountView(a),
        resources,
        open_websockets: (sockets.get(a.id) ?? []).map((s) => ({ path: s.path, opened_at_ms: s.openedAtMs })),
        pending_timers: (timers.get(a.id) ?? []).map((t) => ({ label: t.label, due_ms: t.dueMs })),
      };
    });
    return {
      now_ms: emu.clock.now(),
      frozen: emu.clock.frozen,
      accounts,
      next_cursor: more ? all[all.length - 1]!.id : null,
      totals: {
        accounts: ordered.length,
        open_websockets: emu.sockets.list().length,
        pending_timers: emu.clock.pending().length,
        journal_entries: emu.journal.size(),
        fault_rules: emu.faults.list().length,
        signature_records: emu.signatures.size(),
      },
    };
  });
}

function groupBy<T>(items: T[], key: (item: T) => string | undefined): Map<string | undefined, T[]> {
  const out = new Map<string | undefined, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
