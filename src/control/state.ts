import type { FastifyInstance } from 'fastify';
import { accountView } from '../core/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { input } from './common.js';

/** `GET /_emulator/state`: every account with its resources, sockets and timers, and totals. */
export function stateRoutes(app: FastifyInstance, emu: Emulator): void {
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
}
