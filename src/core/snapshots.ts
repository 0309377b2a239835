/**
 * The whole-state snapshot of a data dir: what changed is counted, every answer waits until the
 * changes made so far are on disk (fsynced, renamed into place, folder synced), and on start the
 * snapshot is read back into the accounts, faults, ids, signature records and state areas. An area
 * that registers later (on first use) gets its saved part when it does.
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
import type { SignatureRecords } from './signatures.js';

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
}

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
      void this.saveNow();
    }, 100);
    this.dirtyTimer.unref();
  }

  /**
   * Resolves once every change made so far is on disk (fsynced): every answer waits for it, so what a
   * client saw acknowledged survives `kill -9`. In memory, or with nothing changed, it resolves at once.
   */
  persist(): Promise<void> {
    if (!this.persistent || this.stopped || this.durable >= this.changes) return Promise.resolve();
    return this.saveNow();
  }

  /**
   * Writes the snapshot to a temporary file, fsyncs it and renames it: a crash never leaves half a
   * snapshot. Callers that arrive while one is being written share the next one.
   */
  saveNow(): Promise<void> {
    if (!this.persistent) return Promise.resolve();
    if (this.queued) return this.queued;
    const next = this.saving
      .then(() => {
        this.queued = null;
        return this.write();
      })
      .catch((err) => this.parts.logger.error({ err }, 'saving state failed'));
    this.queued = next;
    this.saving = next;
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
      version: 1,
      saved_at_ms: clock.now(),
      accounts: accounts.save(),
      signatures: signatures.save(),
      faults: faults.save(),
      ids: ids.save(),
      areas,
    };
    const tmp = join(this.dataDir, `${SNAPSHOT}.tmp`);
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

  /** Loads the snapshot of a data dir, after every area present at start has registered. */
  async load(): Promise<void> {
    const file = join(this.dataDir, SNAPSHOT);
    if (!this.persistent || !existsSync(file)) return;
    let snapshot: { saved_at_ms?: number; accounts?: Account[]; signatures?: never[]; faults?: SavedFaults; ids?: SavedIds; areas?: Record<string, unknown> };
    try {
      snapshot = JSON.parse(await readFile(file, 'utf8'));
      if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) throw new Error('not a JSON object');
    } catch (err) {
      throw new Error(`state snapshot ${file} cannot be read (${(err as Error).message}); move it away to start empty`);
    }
    const { clock, accounts, signatures, faults, ids, areas } = this.parts;
    // The clock never runs backwards across a restart: a state saved after the clock was moved ahead
    // goes on from the time it was saved at (flowing), so its deadlines keep their meaning.
    if (typeof snapshot.saved_at_ms === 'number' && snapshot.saved_at_ms > clock.now()) clock.set(snapshot.saved_at_ms);
    if (snapshot.accounts) accounts.load(snapshot.accounts);
    if (snapshot.signatures) signatures.load(snapshot.signatures);
    if (snapshot.faults) faults.load(snapshot.faults);
    // Id streams go on where they stopped: an id handed out before a restart is never handed out again.
    if (snapshot.ids) ids.load(snapshot.ids);
    for (const [name, data] of Object.entries(snapshot.areas ?? {})) {
      const area = areas.get(name);
      if (area) area.load?.(data);
      else this.unclaimed.set(name, data);
    }
  }
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
