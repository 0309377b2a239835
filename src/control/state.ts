import type { FastifyInstance } from 'fastify';
import { accountView } from '../core/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { input } from './common.js';

/** `GET /_emulator/state`: every account with its resources, sockets and timers, and totals. */
export function stateRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get('/state', input({}), async () => {
    // Sockets and timers grouped by account in one pass each: a long run has thousands of accounts.
    const sockets = groupBy(emu.sockets.list(), (s) => s.accountId ?? undefined);
    const timers = groupBy(emu.clock.pending(), (t) => t.account);
    const all = emu.accounts.all();
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
      totals: {
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
