/**
 * Forgetting accounts that hold nothing. Any key becomes its own account at its first request; one
 * that set nothing, spent nothing and keeps no resource, session, socket or timer is forgotten by a
 * sweep (after its last request's grace) and rebuilt the same at its next request, so a run with
 * many throwaway keys does not grow. A sweep runs every so many new accounts, every 30 s of wall
 * time, and before the state view.
 */
import type { Emulator } from './emulator.js';
import { isEmptyView as empty } from './state/areas.js';

const SWEEP_EVERY_MS = 30_000;

/** The accounts among `ids` that hold anything: a record of an area, an open socket, a pending timer. */
function holders(emu: Emulator, ids: string[]): Set<string> {
  const held = new Set<string>();
  for (const s of emu.sockets.list()) if (s.accountId) held.add(s.accountId);
  for (const t of emu.clock.pending()) if (t.account) held.add(t.account);
  const rest = ids.filter((id) => !held.has(id));
  for (const area of emu.areas.values()) {
    if (area.viewAll) {
      for (const [id, view] of area.viewAll(rest)) if (!empty(view)) held.add(id);
    } else if (area.view) {
      for (const id of rest) if (!held.has(id) && !empty(area.view(id))) held.add(id);
    }
  }
  return held;
}

/** Forgets the accounts that hold nothing now, with their id streams. */
export function sweepAccounts(emu: Emulator): number {
  const dropped = emu.accounts.sweep((ids) => holders(emu, ids));
  for (const id of dropped) emu.ids.reset(id);
  // Their rate windows go too (a throwaway key's async query left one per key).
  emu.limits.forgetAccounts(new Set(dropped));
  return dropped.length;
}

/** Sweeps when many accounts were made and every 30 s; answers the function that stops it. */
export function installAccountSweep(emu: Emulator): () => void {
  emu.accounts.onSweepDue = () => void sweepAccounts(emu);
  const timer = setInterval(() => sweepAccounts(emu), SWEEP_EVERY_MS).unref();
  return () => {
    clearInterval(timer);
    emu.accounts.onSweepDue = null;
  };
}
