/**
 * The whole-state snapshot of a data dir: what changed is counted, every answer waits until the
 * changes made so far are on disk (fsynced, renamed into place, folder synced), and a snapshot that
 * cannot be written fails every answer waiting for it (StorageError): nothing is acknowledged that is
 * not on disk. On start the snapshot is checked part by part (core/snapshot-schema.ts, each area's own
 * `check`) and only then read back into the accounts, faults, ids, signature records and state areas;
 * a part that does not pass stops the start and the file stays as it was. An area that registers later
 * (on first use) gets its saved part when it does.
 */
import { existsSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Account, Accounts } from './accounts.js';
import type { StateArea } from './areas.js';
import type { Clock } from './clock.js';
import type { Faults, SavedFaults } from './faults.js';
import type { Ids, SavedIds } from './ids.js';
import type { SignatureRecord, SignatureRecords } from './signatures.js';
import { snapshotProblem, snapshotSchema, SNAPSHOT_VERSION } from './snapshot-schema.js';
import { StorageError, writeProblem, type StorageWrites } from './storage.js';

export const SNAPSHOT = 'state.json';

/** What a snapshot holds: the parts of one emulator instance. */
export interface SnapshotParts {
  readonly clock: Clock;
  readonly accounts: Accounts;
  readonly signatures: SignatureRecords;
  readonly faults: Faults;
  readonly ids: Ids;
  readonly areas: ReadonlyMap<string, StateArea>;
  readonly logger: Logger;
  /** The write path's switch for simulated failures (core/storage.ts). */
  readonly storageWrites: StorageWrites;
}

/** A saved state that cannot be loaded: the start stops with this one line, and the file is left as it was. */
export class SnapshotError extends Error {}

export class Snapshots {
  private dirtyTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  /** A snapshot waiting for the one being written: later callers share it (one write serves them all). */
  private queued: Promise<void> | null = null;
  /** Changes made so far, and how many of them the snapshot on disk holds. */
  private changes = 0;
  private durable = 0;
  private stopped = false;
  /** Saved parts of areas not registered yet (they register on first use). */
  private readonly unclaimed = new Map<string, unknown>();

  constructor(
    private readonly parts: SnapshotParts,
    private readonly dataDir: string,
    readonly persistent: boolean,
  ) {}

  /**
   * Records that the state changed. Persistent mode: the next answer waits for a snapshot that holds
   * the change (see `persist`), and a snapshot follows soon anyway for changes made outside a request
   * (timers).
   */
  markDirty(): void {
    this.changes += 1;
    if (!this.persistent || this.stopped || this.dirtyTimer) return;
    this.dirtyTimer = setTimeout(() => {
      this.dirtyTimer = null;
      // Logged by saveNow; the next answer tries again and fails if the disk still refuses.
      this.saveNow().catch(() => undefined);
    }, 100);
    this.dirtyTimer.unref();
  }

  /**
   * Resolves once every change made so far is on disk (fsynced): every answer waits for it, so what a
   * client saw acknowledged survives `kill -9`. In memory, or with nothing changed, it resolves at once.
   * Rejects with a StorageError when the snapshot cannot be written: the change stays in memory and
   * each later answer tries again (and fails too) until a snapshot holding it is on disk.
   */
  persist(): Promise<void> {
    if (!this.persistent || this.stopped || this.durable >= this.changes) return Promise.resolve();
    return this.saveNow();
  }

  /**
   * Writes the snapshot to a temporary file, fsyncs it and renames it: a crash never leaves half a
   * snapshot. Callers that arrive while one is being written share the next one, and its failure.
   */
  saveNow(): Promise<void> {
    if (!this.persistent) return Promise.resolve();
    if (this.queued) return this.queued;
    const next = this.saving
      .then(() => {
        this.queued = null;
        return this.write();
      })
      .catch((err: unknown) => {
        this.parts.logger.error({ err }, 'saving state failed');
        throw new StorageError(`the change could not be saved: ${writeProblem(err)} writing ${SNAPSHOT}`, (err as NodeJS.ErrnoException).code);
      });
    this.queued = next;
    // The chain goes on after a failure: the next save is tried afresh.
    this.saving = next.catch(() => undefined);
    return next;
  }

  /** No timer-driven snapshot any more (the last one is the caller's: close saves once more). */
  stop(): void {
    if (this.dirtyTimer) clearTimeout(this.dirtyTimer);
    this.dirtyTimer = null;
  }

  /** After the last save: nothing is written again. */
  close(): void {
    this.stop();
    this.stopped = true;
  }

  /** The saved part of an area that registers after the snapshot was read, handed over once. */
  claim(area: StateArea): void {
    if (!this.unclaimed.has(area.name)) return;
    area.load?.(this.unclaimed.get(area.name));
    this.unclaimed.delete(area.name);
  }

  /** A full reset: saved parts nobody claimed are dropped too. */
  forgetUnclaimed(): void {
    this.unclaimed.clear();
  }

  private async write(): Promise<void> {
    const { clock, accounts, signatures, faults, ids } = this.parts;
    const covered = this.changes;
    const areas: Record<string, unknown> = {};
    for (const [name, data] of this.unclaimed) areas[name] = data;
    for (const a of this.parts.areas.values()) if (a.save) areas[a.name] = a.save();
    const snapshot = {
      version: SNAPSHOT_VERSION,
      saved_at_ms: clock.now(),
      accounts: accounts.save(),
      signatures: signatures.save(),
      faults: faults.save(),
      ids: ids.save(),
      areas,
    };
    const tmp = join(this.dataDir, `${SNAPSHOT}.tmp`);
    this.parts.storageWrites.check(tmp);
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(JSON.stringify(snapshot));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, join(this.dataDir, SNAPSHOT));
    await syncDir(this.dataDir);
    this.durable = Math.max(this.durable, covered);
  }

  /**
   * Loads the snapshot of a data dir, after every area present at start has registered. Every part is
   * checked before anything is loaded: one that does not pass throws a SnapshotError naming the file and
   * the part, and nothing is changed (the caller closes without saving, so the file stays as it was).
   */
  async load(): Promise<void> {
    const file = join(this.dataDir, SNAPSHOT);
    if (!this.persistent || !existsSync(file)) return;
    const refuse = (problem: string) =>
      new SnapshotError(`state snapshot ${file} cannot be read (${problem}); move it away (mv ${file} ${file}.bad) to start empty`);
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      throw refuse((err as Error).message);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refuse('not a JSON object');
    const parsed = snapshotSchema.safeParse(raw);
    if (!parsed.success) throw refuse(`part ${snapshotProblem(parsed.error)}`);
    const snapshot = parsed.data;
    const { clock, accounts, signatures, faults, ids, areas } = this.parts;
    for (const [name, data] of Object.entries(snapshot.areas ?? {})) {
      const area = areas.get(name);
      // An area this version does not declare is kept as saved (and saved again), never read.
      if (!area) continue;
      const problem = savedAreaProblem(area, data);
      if (problem) throw refuse(`part areas.${name}: ${problem}`);
    }
    // The clock never runs backwards across a restart: a state saved after the clock was moved ahead
    // goes on from the time it was saved at (flowing), so its deadlines keep their meaning.
    if (typeof snapshot.saved_at_ms === 'number' && snapshot.saved_at_ms > clock.now()) clock.set(snapshot.saved_at_ms);
    if (snapshot.accounts) accounts.load(snapshot.accounts as Account[]);
    if (snapshot.signatures) signatures.load(snapshot.signatures as SignatureRecord[]);
    if (snapshot.faults) faults.load(snapshot.faults as SavedFaults);
    // Id streams go on where they stopped: an id handed out before a restart is never handed out again.
    if (snapshot.ids) ids.load(snapshot.ids as SavedIds);
    for (const [name, data] of Object.entries(snapshot.areas ?? {})) {
      const area = areas.get(name);
      if (!area) this.unclaimed.set(name, data);
      else {
        try {
          area.load?.(data);
        } catch (err) {
          // A check that let something through is still named, never a bare "x is not iterable".
          throw refuse(`part areas.${name}: ${(err as Error).message}`);
        }
      }
    }
  }
}

/** The problem with an area's saved part: its own check, or (for an area without one) a part that is no collection. */
function savedAreaProblem(area: StateArea, data: unknown): string | null {
  if (area.check) return area.check(data);
  if (typeof data !== 'object' || data === null) return `must be a list or an object, not ${data === null ? 'null' : typeof data}`;
  return null;
}

/** A rename is durable once its folder is synced too. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
