/**
 * How state areas are declared. An area is one part of the state owned by one service area (voices,
 * uploads, tasks, sessions…): it says what it keeps per account, and reset (all or one account's),
 * the state view, save and load come from that declaration. `areaOf` registers an area on first use;
 * `recordArea` declares the common kind, records of accounts in one map by id; `accountArea` the other
 * kind, one value per account (a usage counter, a list of uploads, a map of voices).
 *
 * With a data dir, every change is marked (`emu.markDirty(area, account, id)`): the state store
 * (core/state/store/) writes only the rows marked, so an area that declares its `records` costs a write of
 * the records that changed, not of the whole area. A change marked without a record rewrites the
 * account's records of the area; without an account, the whole area.
 */
import * as z from 'zod';

/**
 * A part of the state owned by one service area (custom voices, uploads, sessions…). Areas register
 * with the emulator so reset, the state view and persistence reach them without knowing them.
 */
export interface StateArea {
  name: string;
  /** Drop resources: all of them, or one account's. */
  reset(accountId?: string): void;
  /** Resources of one account for `GET /_emulator/state`. */
  view?(accountId: string): unknown;
  /** The same for many accounts at once, in one pass over the area (see `recordViews`). */
  viewAll?(accountIds: string[]): Map<string, unknown>;
  /** Plain serializable data for the snapshot in the data dir. */
  save?(): unknown;
  /** Restore from a snapshot; rebuild pending deadlines from their timestamps. */
  load?(data: unknown): void;
  /**
   * What is wrong with a saved part before it is loaded, as `where: rule` inside the part (null when it
   * loads): a part that does not pass stops the start instead of being loaded half and overwritten.
   */
  check?(data: unknown): string | null;
  /** The saved part as one row per record, so the store writes only those that changed. */
  records?: SavedRecords;
}

/** One record of a saved part: its id, its account (null for none) and what is saved of it. */
export interface SavedRecord {
  id: string;
  account: string | null;
  value: unknown;
}

/** How an area's saved part splits into records and joins back (what `save` gives, what `load` takes). */
export interface SavedRecords {
  /** The saved part (what `save` answers) as records. */
  split(part: unknown): SavedRecord[];
  /** Saved records back into the part `check` and `load` read. */
  join(records: SavedRecord[]): unknown;
  /** One record as it is now, or undefined once it is gone. */
  one?(id: string): SavedRecord | undefined;
  /** One account's records as they are now. */
  ofAccount?(accountId: string): SavedRecord[];
  /** Stored files (blob paths) a saved record names: a start finding one missing stops. */
  blobsOf?(value: unknown): string[];
}

/** `SavedRecords` of a part that is a list of records: the common shape. */
export function listRecords<R>(
  idOf: (r: R) => string | number,
  accountOf: (r: R) => string | null,
  current: { one?: (id: string) => R | undefined; ofAccount?: (accountId: string) => Iterable<R>; blobs?: (r: R) => string[] } = {},
): SavedRecords {
  const row = (r: R): SavedRecord => ({ id: String(idOf(r)), account: accountOf(r), value: r });
  const { one, ofAccount, blobs } = current;
  return {
    blobsOf: blobs && ((value) => blobs(value as R)),
    split: (part) => (Array.isArray(part) ? (part as R[]).map(row) : []),
    join: (records) => records.map((r) => r.value),
    one: one
      ? (id) => {
          const r = one(id);
          return r === undefined ? undefined : row(r);
        }
      : undefined,
    ofAccount: ofAccount ? (accountId) => [...ofAccount(accountId)].map(row) : undefined,
  };
}

/** `SavedRecords` of a part that is an object by account id (one record per account: usage, uploads…). */
export function accountRecords(current: (accountId: string) => unknown, blobsOf?: (value: unknown) => string[]): SavedRecords {
  const one = (id: string): SavedRecord | undefined => {
    const value = current(id);
    return value === undefined ? undefined : { id, account: id, value };
  };
  return {
    blobsOf,
    split: (part) =>
      typeof part === 'object' && part !== null && !Array.isArray(part) ? Object.entries(part).map(([id, value]) => ({ id, account: id, value })) : [],
    join: (records) => Object.fromEntries(records.map((r) => [r.id, r.value])),
    one,
    ofAccount: (accountId) => {
      const r = one(accountId);
      return r ? [r] : [];
    },
  };
}

/** A `check` from a schema of the saved part: its first problem, with the path inside the part. */
export function checkWith(schema: z.ZodType): (data: unknown) => string | null {
  return (data) => {
    const parsed = schema.safeParse(data);
    if (parsed.success) return null;
    const issue = parsed.error.issues[0]!;
    const where = partPath(issue.path);
    return where ? `${where}: ${issue.message}` : issue.message;
  };
}

/** `[2].turns[0].text` from a path of keys and indexes (empty for the part itself). */
function partPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out.replace(/^\./, '');
}

/**
 * The state area `name` of an emulator, made by `create` and registered on first use (reset, the
 * state view and snapshots then reach it). One name has one shape: the area's own module is the only
 * caller with that name, so the type it asks for is the type it registered.
 */
/** Where areas are registered: the emulator instance (core/emulator.ts). */
export interface AreaHost {
  readonly areas: ReadonlyMap<string, StateArea>;
  registerArea(area: StateArea): void;
  markDirty(part?: string, account?: string | null, id?: string | number): void;
}

export function areaOf<A extends StateArea>(emu: AreaHost, name: string, create: () => A): A {
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

/** What an area of records kept in one map by id says about them. */
export interface RecordAreaDeclaration<K, R> {
  name: string;
  /** The record's id, its key in the map. */
  idOf(record: R): K;
  /** The account a record belongs to. */
  accountOf(record: R): string;
  /** What the state view shows of a record. */
  show(record: R): unknown;
  /** The records the state view lists (default: all of them), e.g. after expired ones were swept. */
  listed?(byId: Map<K, R>): Iterable<R>;
  /**
   * What is wrong with one saved record (null when it loads). Default: it must be an object with an id
   * and an account; an area whose records carry more than that names them with `checkWith(schema)`.
   */
  record?(saved: unknown): string | null;
  /** A saved record as a restart brings it back (default: as saved). */
  restore?(record: R): R;
  /** Stored files (blob paths) a record names, checked at start. */
  blobs?(record: R): string[];
  /** What a reset drops besides the records (files of the account, or all). */
  alsoReset?(accountId: string | undefined): void;
}

export interface RecordArea<K, R> extends StateArea {
  byId: Map<K, R>;
}

/** An area of records in one map by id: reset, the state view, save and load come from its declaration. */
export function recordArea<K, R>(decl: RecordAreaDeclaration<K, R>): RecordArea<K, R> {
  const byId = new Map<K, R>();
  return {
    name: decl.name,
    byId,
    reset(accountId) {
      if (accountId === undefined) byId.clear();
      else for (const [id, r] of byId) if (decl.accountOf(r) === accountId) byId.delete(id);
      decl.alsoReset?.(accountId);
    },
    ...recordViews(() => (decl.listed ? decl.listed(byId) : byId.values()), decl.accountOf, decl.show),
    save: () => [...byId.values()],
    // Ids are strings or numbers: a saved id comes back as text, so a number is looked up as one too.
    records: listRecords(decl.idOf as (r: R) => string | number, decl.accountOf, {
      one: (id) => byId.get(id as K) ?? byId.get(Number(id) as K),
      blobs: decl.blobs,
    }),
    check(data) {
      if (!Array.isArray(data)) return `must be a list of records, not ${data === null ? 'null' : typeof data}`;
      for (const [i, r] of data.entries()) {
        const problem = decl.record ? decl.record(r) : recordProblem(decl, r);
        if (problem) return `record [${i}]: ${problem}`;
      }
      return null;
    },
    load(data) {
      byId.clear();
      for (const r of (Array.isArray(data) ? data : []) as R[]) byId.set(decl.idOf(r), decl.restore ? decl.restore(r) : r);
    },
  };
}

/** The default check of a saved record: an object whose id and account the declaration can read. */
function recordProblem<K, R>(decl: RecordAreaDeclaration<K, R>, saved: unknown): string | null {
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return 'must be an object';
  const id = decl.idOf(saved as R) as unknown;
  if (typeof id !== 'string' && typeof id !== 'number') return 'has no id';
  if (typeof decl.accountOf(saved as R) !== 'string') return 'has no account';
  return null;
}

/** An area's saved part as an object by account id, one value per account (usage, uploads…). */
export interface SavedByAccount<V, S = V> {
  /** Schema of one account's saved value: the part is a record of them by account id. */
  value: z.ZodType;
  /** What is saved of a value (default: the value as kept, when S is V). */
  saved?(value: V): S;
  /** A saved value as a restart keeps it (default: as saved, when S is V). */
  restore?(saved: S): V;
  /** Stored files (blob paths) a saved value names, checked at start. */
  blobs?(saved: S): string[];
}

/** An area's saved part as one list of every account's entries, a record per entry (custom voices…). */
export interface SavedAsEntries<V, E> {
  /** Schema of one saved entry: the part is a list of them. */
  entry: z.ZodType;
  /** The entry's record id, unique in the area. */
  idOf(entry: E): string;
  accountOf(entry: E): string;
  /** An account's entries, in the order they are saved. */
  entriesOf(value: V): Iterable<E>;
  /** The account's value with a loaded entry added (`value` is undefined for the account's first). */
  add(value: V | undefined, entry: E): V;
  /** Stored files (blob paths) an entry names, checked at start. */
  blobs?(entry: E): string[];
}

/**
 * What an area that keeps one value per account says about it, and how its saved part is laid out:
 * `savedByAccount` or `savedAsEntries`.
 */
export type AccountAreaDeclaration<V, E = never, S = V> = AccountAreaRules<V> &
  ({ savedByAccount: SavedByAccount<V, S>; savedAsEntries?: never } | { savedAsEntries: SavedAsEntries<V, E>; savedByAccount?: never });

/** What every area of one value per account declares, whatever the layout of its saved part. */
export interface AccountAreaRules<V> {
  name: string;
  /** What the state view shows of an account's value (undefined when the account has none). */
  show(value: V | undefined): unknown;
  /**
   * How a reset drops the stored files of one account (or of all, `accountId` undefined), once the
   * values are gone; `dropped` are the values the reset removed.
   */
  dropFiles?(accountId: string | undefined, dropped: V[]): void;
}

export interface AccountArea<V> extends StateArea {
  byAccount: Map<string, V>;
}

/** An area of one value per account in a map: reset, the state view, save and load come from its declaration. */
export function accountArea<V, E = never, S = V>(decl: AccountAreaDeclaration<V, E, S>): AccountArea<V> {
  const byAccount = new Map<string, V>();
  const part = decl.savedAsEntries ? entryPart(byAccount, decl.savedAsEntries) : byAccountPart(byAccount, decl.savedByAccount);
  return {
    name: decl.name,
    byAccount,
    reset(accountId) {
      let dropped: V[];
      if (accountId === undefined) {
        dropped = [...byAccount.values()];
        byAccount.clear();
      } else {
        const value = byAccount.get(accountId);
        dropped = value === undefined ? [] : [value];
        byAccount.delete(accountId);
      }
      decl.dropFiles?.(accountId, dropped);
    },
    view: (accountId) => decl.show(byAccount.get(accountId)),
    ...part,
  };
}

type SavedPart = Required<Pick<StateArea, 'save' | 'load' | 'check' | 'records'>>;

function byAccountPart<V, S>(byAccount: Map<string, V>, saved: SavedByAccount<V, S>): SavedPart {
  // Without `saved`/`restore` the saved form is the value itself (S is V).
  const savedOf = (value: V): S => (saved.saved ? saved.saved(value) : (value as unknown as S));
  const { blobs, restore } = saved;
  return {
    save: () => Object.fromEntries([...byAccount].map(([id, value]) => [id, savedOf(value)])),
    records: accountRecords(
      (accountId) => {
        const value = byAccount.get(accountId);
        return value === undefined ? undefined : savedOf(value);
      },
      blobs && ((value) => blobs(value as S)),
    ),
    check: checkWith(z.record(z.string(), saved.value)),
    load(data) {
      byAccount.clear();
      for (const [id, value] of Object.entries((data ?? {}) as Record<string, S>)) byAccount.set(id, restore ? restore(value) : (value as unknown as V));
    },
  };
}

function entryPart<V, E>(byAccount: Map<string, V>, saved: SavedAsEntries<V, E>): SavedPart {
  return {
    save: () => [...byAccount.values()].flatMap((value) => [...saved.entriesOf(value)]),
    records: listRecords<E>(saved.idOf, saved.accountOf, {
      ofAccount: (accountId) => {
        const value = byAccount.get(accountId);
        return value === undefined ? [] : saved.entriesOf(value);
      },
      blobs: saved.blobs,
    }),
    check: checkWith(z.array(saved.entry)),
    load(data) {
      byAccount.clear();
      for (const entry of (Array.isArray(data) ? data : []) as E[]) {
        const accountId = saved.accountOf(entry);
        byAccount.set(accountId, saved.add(byAccount.get(accountId), entry));
      }
    },
  };
}
