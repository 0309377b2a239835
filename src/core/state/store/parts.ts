/**
 * How each saved part of the state maps to rows and back. Core parts (accounts, id streams, signature
 * records, fault rules, the clock) go to the `parts` table, one row per account, stream or record where
 * they grow; each state area goes to `records`, one row per record when the area declares its records
 * (core/state/areas.ts `records`), else one row holding its whole saved part. Loading joins the rows back into
 * the saved part each area already checks and loads, so the rules of a saved state stay in one place.
 */
import type { Accounts } from '../accounts.js';
import { holdsRecords, type SavedRecord, type StateArea } from '../areas.js';
import type { Clock } from '../clock.js';
import { FAULT_COUNTER, type FaultRule, type Faults, type SavedFaults } from '../../faults/faults.js';
import type { Ids, SavedIds } from '../ids.js';
import type { SignatureRecords } from '../signatures.js';

export type Table = 'parts' | 'records';

/** One saved part as rows. */
export interface PartRows {
  table: Table;
  name: string;
  /** One row holding the whole part: any change rewrites it. */
  whole?: boolean;
  /** Every row now. */
  all(): Iterable<SavedRecord>;
  /** One account's rows now (default: filtered from `all`). */
  ofAccount?(account: string | null): Iterable<SavedRecord>;
  /** One row now, or undefined once it is gone (default: the account's rows are rewritten). */
  one?(id: string): SavedRecord | undefined;
  /** A saved part (of the JSON snapshot being migrated) as rows. */
  split(part: unknown): Iterable<SavedRecord>;
  /** Rows as loaded, joined into the saved part. */
  join(rows: SavedRecord[]): unknown;
}

/** Where the whole part of an area without declared records sits. */
export const WHOLE_PART = '';

/** The rows of a state area: its declared records, or its whole saved part in one row. */
export function areaRows(area: StateArea): PartRows {
  const records = area.records;
  if (records)
    return {
      table: 'records',
      name: area.name,
      all: () => records.split(area.save?.() ?? []),
      ofAccount: records.ofAccount ? (account) => records.ofAccount!(account ?? '') : undefined,
      one: records.one,
      split: (part) => records.split(part),
      join: (rows) => records.join(rows),
    };
  return wholePart('records', area.name, () => area.save?.());
}

/** Rows of an area this version does not know (or that has not registered yet): written as they were. */
export function keptRows(name: string, part: unknown): PartRows {
  return wholePart('records', name, () => part);
}

function wholePart(table: Table, name: string, save: () => unknown): PartRows {
  const row = (value: unknown): SavedRecord[] => (value === undefined ? [] : [{ id: WHOLE_PART, account: null, value }]);
  return {
    table,
    name,
    whole: true,
    all: () => row(save()),
    split: (part) => row(part),
    join: (rows) => rows[0]?.value,
  };
}

/**
 * Fault rules, one row each (in the order added: a row keeps its place when it changes) and one row
 * for the counter of their ids: adding a rule writes that rule, not the whole list. A database of an
 * earlier version holds the whole part in one row; it is read, then written again as rows.
 */
function faultRows(faults: Faults): PartRows {
  const counterRow = (counter: number): SavedRecord => ({ id: FAULT_COUNTER, account: null, value: counter });
  const rowsOf = (saved: SavedFaults): SavedRecord[] => [counterRow(saved.counter), ...saved.rules.map((r) => ({ id: r.id, account: null, value: r }))];
  return {
    table: 'parts',
    name: 'faults',
    all: () => rowsOf(faults.save()),
    one: (id) => {
      if (id === FAULT_COUNTER) return counterRow(faults.lastNumber);
      const rule = faults.get(id);
      return rule && { id, account: null, value: rule };
    },
    split: (part) => rowsOf(part as SavedFaults),
    join: (rows) => {
      const whole = rows.find((r) => r.id === WHOLE_PART)?.value as SavedFaults | undefined;
      if (whole && rows.length === 1) return whole;
      const rules = rows.filter((r) => r.id !== FAULT_COUNTER && r.id !== WHOLE_PART).map((r) => r.value as FaultRule);
      const counter = rows.find((r) => r.id === FAULT_COUNTER)?.value;
      return { rules, counter: typeof counter === 'number' ? counter : rules.length };
    },
  };
}

export interface CoreParts {
  areas: ReadonlyMap<string, StateArea>;
  clock: Clock;
  accounts: Accounts;
  signatures: SignatureRecords;
  faults: Faults;
  ids: Ids;
}

/** The core parts, each with the field of the JSON snapshot it was saved in. */
export function coreRows(parts: CoreParts): PartRows[] {
  const { accounts, signatures, faults, ids, clock, areas } = parts;
  /**
   * An account with nothing worth keeping (as a request with its key builds it, no record in any area)
   * is not written, nor its id stream: a run of throwaway keys costs no disk. A row written before is
   * removed; the account is rebuilt the same at its key's next request.
   */
  const keepsNothing = (id: string) => accounts.isPristine(id) && !holdsRecords(areas.values(), id);
  return [
    {
      table: 'parts',
      name: 'accounts',
      all: () =>
        accounts
          .save()
          .filter((a) => !keepsNothing(a.id))
          .map((a) => ({ id: a.id, account: a.id, value: a })),
      one: (id) => {
        const a = accounts.byId(id);
        return a && !keepsNothing(id) ? { id, account: id, value: a } : undefined;
      },
      split: (part) => (part as { id: string }[]).map((a) => ({ id: a.id, account: a.id, value: a })),
      join: (rows) => rows.map((r) => r.value),
    },
    {
      table: 'parts',
      name: 'signatures',
      all: () => signatures.save().map((s) => ({ id: s.id, account: null, value: s })),
      one: (id) => {
        const s = signatures.get(id);
        return s && { id, account: null, value: s };
      },
      split: (part) => (part as { id: string }[]).map((s) => ({ id: s.id, account: null, value: s })),
      join: (rows) => rows.map((r) => r.value),
    },
    {
      table: 'parts',
      name: 'ids',
      all: () =>
        Object.entries(ids.save())
          .filter(([id]) => !keepsNothing(id))
          .map(([id, value]) => ({ id, account: null, value })),
      one: (id) => {
        const saved = keepsNothing(id) ? undefined : ids.saveOne(id);
        return saved && { id, account: null, value: saved };
      },
      split: (part) => Object.entries(part as SavedIds).map(([id, value]) => ({ id, account: null, value })),
      join: (rows) => Object.fromEntries(rows.map((r) => [r.id, r.value])),
    },
    faultRows(faults),
    wholePart('parts', 'clock', () => clock.now()),
  ];
}
