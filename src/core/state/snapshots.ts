/**
 * A saved state as one object, the shape of the JSON snapshot earlier versions kept (`state.json`):
 * checked part by part (core/state/snapshot-schema.ts, each area's own `check`) before anything is loaded,
 * then read back into the accounts, faults, ids, signature records and state areas. The state store
 * (core/state/store/) joins its rows into this shape to load them, and migrates a data dir that still holds
 * the JSON snapshot through the same checks: a part that does not pass stops the start, and the file
 * or database stays as it was.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Account, Accounts } from './accounts.js';
import type { AccountRegistry } from './account-settings.js';
import type { StateArea } from './areas.js';
import type { Clock } from './clock.js';
import type { Faults, SavedFaults } from '../faults/faults.js';
import type { Ids, SavedIds } from './ids.js';
import type { SignatureRecord, SignatureRecords } from './signatures.js';
import { snapshotProblem, snapshotSchema, SNAPSHOT_VERSION, type SavedSnapshot } from './snapshot-schema.js';
import type { StorageWrites } from './storage.js';

/** The JSON snapshot of earlier versions: migrated into the database on first start. */
export const SNAPSHOT = 'state.json';
/** What the JSON snapshot is renamed to once migrated (kept as a backup). */
export const MIGRATED_SNAPSHOT = 'state.json.migrated';

/** What a saved state holds: the parts of one emulator instance. */
export interface SnapshotParts {
  readonly clock: Clock;
  readonly accounts: Accounts;
  readonly signatures: SignatureRecords;
  readonly faults: Faults;
  readonly ids: Ids;
  readonly areas: ReadonlyMap<string, StateArea>;
  readonly logger: Logger;
  /** The write path's switch for simulated failures (core/state/storage.ts). */
  readonly storageWrites: StorageWrites;
}

/** A saved state that cannot be loaded: the start stops with this one line, and the file is left as it was. */
export class SnapshotError extends Error {}

/** Builds the error naming a saved state's file and its problem. */
export type Refusal = (problem: string) => SnapshotError;

/** The refusal of a JSON snapshot, as earlier versions said it. */
export function snapshotRefusal(file: string): Refusal {
  return (problem) => new SnapshotError(`state snapshot ${file} cannot be read (${problem}); move it away (mv ${file} ${file}.bad) to start empty`);
}

/** Reads and checks a JSON snapshot (nothing is loaded): a SnapshotError names what does not pass. */
export async function readSnapshotFile(file: string, areas: ReadonlyMap<string, StateArea>, registry: AccountRegistry): Promise<SavedSnapshot> {
  const refuse = snapshotRefusal(file);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw refuse((err as Error).message);
  }
  return checkSaved(raw, areas, registry, refuse);
}

/** Checks every part of a saved state before any of it is loaded. */
export function checkSaved(raw: unknown, areas: ReadonlyMap<string, StateArea>, registry: AccountRegistry, refuse: Refusal): SavedSnapshot {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refuse('not a JSON object');
  const parsed = snapshotSchema(registry).safeParse(raw);
  if (!parsed.success) throw refuse(`part ${snapshotProblem(parsed.error)}`);
  for (const [name, data] of Object.entries(parsed.data.areas ?? {})) {
    const area = areas.get(name);
    // An area this version does not declare is kept as saved (and saved again), never read.
    if (!area) continue;
    const problem = savedAreaProblem(area, data);
    if (problem) throw refuse(`part areas.${name}: ${problem}`);
  }
  return parsed.data;
}

/**
 * Loads a checked saved state. Areas not registered yet get theirs when they register: their parts are
 * answered (name → part) for the caller to keep.
 */
export function applySaved(parts: SnapshotParts, snapshot: SavedSnapshot, refuse: Refusal): Map<string, unknown> {
  const { clock, accounts, signatures, faults, ids, areas } = parts;
  // The clock never runs backwards across a restart: a state saved after the clock was moved ahead
  // goes on from the time it was saved at (flowing), so its deadlines keep their meaning.
  if (typeof snapshot.saved_at_ms === 'number' && snapshot.saved_at_ms > clock.now()) clock.set(snapshot.saved_at_ms);
  if (snapshot.accounts) accounts.load(snapshot.accounts as Account[]);
  if (snapshot.signatures) signatures.load(snapshot.signatures as SignatureRecord[]);
  if (snapshot.faults) faults.load(snapshot.faults as SavedFaults);
  // Id streams go on where they stopped: an id handed out before a restart is never handed out again.
  if (snapshot.ids) ids.load(snapshot.ids as SavedIds);
  const unclaimed = new Map<string, unknown>();
  for (const [name, data] of Object.entries(snapshot.areas ?? {})) {
    const area = areas.get(name);
    if (!area) unclaimed.set(name, data);
    else {
      try {
        area.load?.(data);
      } catch (err) {
        // A check that let something through is still named, never a bare "x is not iterable".
        throw refuse(`part areas.${name}: ${(err as Error).message}`);
      }
    }
  }
  return unclaimed;
}

/** The whole state as one object of the snapshot's shape (what a JSON snapshot held). */
export function savedSnapshot(parts: SnapshotParts, unclaimed: ReadonlyMap<string, unknown>): SavedSnapshot {
  const { clock, accounts, signatures, faults, ids } = parts;
  const areas: Record<string, unknown> = {};
  for (const [name, data] of unclaimed) areas[name] = data;
  for (const a of parts.areas.values()) if (a.save) areas[a.name] = a.save();
  const saved = {
    version: SNAPSHOT_VERSION,
    saved_at_ms: clock.now(),
    accounts: accounts.save(),
    signatures: signatures.save(),
    faults: faults.save(),
    ids: ids.save(),
    areas,
  };
  return saved as unknown as SavedSnapshot;
}

/** The problem with an area's saved part: its own check, or (for an area without one) a part that is no collection. */
function savedAreaProblem(area: StateArea, data: unknown): string | null {
  if (area.check) return area.check(data);
  if (typeof data !== 'object' || data === null) return `must be a list or an object, not ${data === null ? 'null' : typeof data}`;
  return null;
}
