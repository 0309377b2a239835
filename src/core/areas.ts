import type { Emulator, StateArea } from './emulator.js';

/**
 * The state area `name` of an emulator, made by `create` and registered on first use (reset, the
 * state view and snapshots then reach it). One name has one shape: the area's own module is the only
 * caller with that name, so the type it asks for is the type it registered.
 */
export function areaOf<A extends StateArea>(emu: Emulator, name: string, create: () => A): A {
  const existing = emu.areas.get(name);
  if (existing) return existing as A;
  const area = create();
  emu.registerArea(area);
  return area;
}

/**
 * `view` and `viewAll` of an area whose records sit in one collection: one account's records shown, or
 * every account's at once. The state view asks for thousands of accounts in a long run; grouping the
 * records in one pass keeps it linear where a scan per account would not be.
 */
export function recordViews<R>(
  records: () => Iterable<R>,
  accountOf: (record: R) => string | null | undefined,
  show: (record: R) => unknown,
): Required<Pick<StateArea, 'view' | 'viewAll'>> {
  return {
    view: (accountId) => {
      const out: unknown[] = [];
      for (const r of records()) if (accountOf(r) === accountId) out.push(show(r));
      return out;
    },
    viewAll: (accountIds) => {
      const groups = new Map<string, unknown[]>();
      for (const r of records()) {
        const id = accountOf(r);
        if (id == null) continue;
        const group = groups.get(id);
        if (group) group.push(show(r));
        else groups.set(id, [show(r)]);
      }
      return new Map(accountIds.map((id) => [id, groups.get(id) ?? []]));
    },
  };
}
