/**
 * The state of a data dir in SQLite (`state.db`), written through: each change is marked where it is
 * made (core/state/areas.ts), and before an answer leaves, the rows of the changes made so far are committed
 * in one transaction (WAL), then the log is fsynced off the event loop before the answers leave (what
 * `synchronous=FULL` did inside the commit, blocking every request for the fsync's time: 1.7 ms median,
 * over 100 ms at worst on a busy disk). Answers that wait at the same time share one commit. A commit that fails (a full or read-only disk, an I/O error, a simulated
 * failure) is rolled back, its changes stay marked, and every answer waiting for it is refused with a
 * StorageError until a commit holding them succeeds: nothing is acknowledged that is not on disk.
 *
 * In memory (no data dir) nothing of this runs: marks return at once and there is no database. Reading
 * the saved rows back into parts (and a JSON snapshot migrated) is core/state/store/saved-rows.ts.
 */
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { StateArea } from '../areas.js';
import { applySaved, checkSaved, MIGRATED_SNAPSHOT, readSnapshotFile, SnapshotError, SNAPSHOT, type Refusal, type SnapshotParts } from '../snapshots.js';
import { SNAPSHOT_VERSION } from '../snapshot-schema.js';
import { StorageError, writeProblem } from '../storage.js';
import { Changes, type TakenChanges } from './changes.js';
import { createDatabase, DATABASE, openDatabase, sqliteCode, sqliteProblem, UnreadableDatabase } from './database.js';
import { syncDirSync } from './files.js';
import { areaRows, coreRows, keptRows, WHOLE_PART, type PartRows } from './parts.js';
import { Checkpointer } from './checkpointer.js';
import { LogSync } from './log-sync.js';
import { sweepOrphanFiles } from './orphans.js';
import { probeWrite } from './probe.js';
import { DATA, ID, readRows, RowWriter, type StoredRow } from './row-writer.js';
import { checkBlobs, groupBy, joinRows, migrateSnapshot } from './saved-rows.js';

export class StateStore {
  private db: DatabaseSync | null = null;
  private writer: RowWriter | null = null;
  private checkpointer: Checkpointer | null = null;
  private readonly changes = new Changes();
  private readonly core: PartRows[];
  /** Saved rows of areas not registered yet (they register on first use), by area. */
  private readonly unclaimed = new Map<string, StoredRow[]>();
  /** The commit the answers waiting now share. */
  private scheduled: Promise<void> | null = null;
  /** The log's fsync after each commit (an answer with nothing marked of its own waits for the one running). */
  private logSync: LogSync | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /**
   * The last commit failed: what it held was refused to its clients, so only the commit of a later
   * answer writes it (the timer and the close do not), and a refused change is kept only if a later
   * change is acknowledged.
   */
  private refused = false;
  /** Why the last commit (or its fsync) failed; null once one succeeds (readiness says it). */
  failing: string | null = null;
  /** Areas read from a whole-part row that are written again as records once loaded. */
  private readonly rewriteAfterLoad = new Set<string>();
  readonly file: string;

  constructor(
    private readonly parts: SnapshotParts,
    private readonly dataDir: string,
    readonly persistent: boolean,
  ) {
    this.file = join(dataDir, DATABASE);
    this.core = coreRows(parts);
    if (!persistent) return;
    // Rows these parts change along with a marked change: written with the next commit, never one of their own.
    parts.accounts.onChange = (id) => this.changes.note('accounts', id);
    parts.ids.onTouch = (name) => this.changes.note('ids', name);
    parts.signatures.onChange = (id) => this.changes.note('signatures', id);
  }

  /**
   * Records a change: everything, a whole part, one account's records of it, or one record. The next
   * answer waits for a commit that holds it, and a commit follows soon anyway for changes made outside
   * a request (timers).
   */
  markDirty(part?: string, account?: string | null, id?: string | number): void {
    if (!this.persistent || this.stopped) return;
    this.changes.mark(part, account, id === undefined ? undefined : String(id));
    // An account that now holds records is worth keeping: its row and id stream go with them.
    if (account) {
      this.changes.note('accounts', account);
      this.changes.note('ids', account);
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // Logged by commit; the next answer tries again and fails if the disk still refuses.
      if (!this.refused) this.persist().catch(() => undefined);
    }, 100);
    this.timer.unref();
  }

  /**
   * Resolves once every change marked so far is committed. Callers in the same turn of the event loop
   * share one commit. In memory, or with nothing marked, it resolves at once.
   */
  persist(): Promise<void> {
    if (!this.persistent || this.stopped || !this.db) return Promise.resolve();
    if (this.changes.isEmpty()) return this.scheduled ?? this.logSync?.inFlight() ?? Promise.resolve();
    this.scheduled ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.scheduled = null;
        let taken: TakenChanges | null;
        try {
          taken = this.commit();
        } catch (err) {
          reject(err);
          return;
        }
        // Closed meanwhile: the close committed and synced what was marked (and removed the log).
        if (!taken) resolve();
        else this.sync(taken).then(resolve, reject);
      });
    });
    return this.scheduled;
  }

  /** The commit (or the fsync) an answer must wait for, when one is due; null otherwise (a stream's frame goes at once). */
  pending(): Promise<void> | null {
    if (!this.persistent || this.stopped || !this.db) return null;
    if (this.changes.isEmpty()) return this.scheduled ?? this.logSync?.inFlight() ?? null;
    return this.persist();
  }

  /** Commits what is marked and the clock, now, and syncs the log (close). */
  saveNow(): Promise<void> {
    if (!this.persistent || this.stopped || !this.db || this.refused) return Promise.resolve();
    try {
      if (this.commit()) this.logSync!.syncNow();
      return Promise.resolve();
    } catch (err) {
      // A failed commit or fsync, logged and named as a StorageError.
      this.refused = true;
      return Promise.reject(err as Error);
    }
  }

  /**
   * Commits what is marked now, log fsynced, before the caller goes on (a reset, before it removes the
   * files of what it dropped). True once it is on disk (always in memory); false when it could not be
   * (the answers waiting for it are refused as ever, and the caller keeps its files).
   */
  commitNow(): boolean {
    if (!this.persistent) return true;
    if (this.stopped || !this.db) return false;
    try {
      if (this.commit()) this.logSync!.syncNow();
      return true;
    } catch (err) {
      this.refused = true;
      this.failing = (err as Error).message;
      return false;
    }
  }

  /** The log's fsync after a commit; when it fails, the commit's changes are marked again and the answers refused. */
  private sync(taken: TakenChanges): Promise<void> {
    return this.logSync!.afterCommit(() => {
      this.refused = true;
      this.failing = 'the change could not be saved: the log of the data dir could not be synced';
      this.changes.restore(taken);
    });
  }

  /**
   * Cuts the log to nothing once commits stopped (the checkpointer's idle step): on this connection, so
   * no commit runs meanwhile. Busy (the worker's checkpoint holds the log) or failing: the next idle
   * period tries again, and the log is only a little larger until then.
   */
  private truncateLog(): void {
    if (!this.db || this.stopped || !this.changes.isEmpty()) return;
    try {
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Tried again after the next commits.
    }
  }

  /** No timer-driven commit any more (the last one is the caller's: close commits once more). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** After the last commit: nothing is written again, and the database is closed (a last checkpoint with it). */
  async close(): Promise<void> {
    this.stop();
    this.stopped = true;
    await this.checkpointer?.close();
    this.checkpointer = null;
    this.db?.close();
    this.db = null;
    this.writer = null;
  }

  /** Commits what is marked, returning it; null when the database was closed meanwhile (nothing to do). */
  private commit(): TakenChanges | null {
    // Closed since the commit was scheduled: the close committed what was marked.
    if (!this.db) return null;
    const db = this.db;
    // The clock's row goes with every commit: a restart goes on from the time of the last one.
    this.changes.mark('clock');
    const taken = this.changes.take();
    try {
      this.parts.storageWrites.check(this.file);
      db.exec('BEGIN IMMEDIATE');
      this.writer!.write(taken, this.sources(), new Set(this.unclaimed.keys()));
      db.exec('COMMIT');
      this.refused = false;
      this.failing = null;
      this.checkpointer?.committed();
      return taken;
    } catch (err) {
      if (db.isTransaction) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // The transaction is gone with the failure: nothing of it was committed either way.
        }
      }
      this.changes.restore(taken);
      this.refused = true;
      const code = typeof (err as { errcode?: unknown }).errcode === 'number' ? this.codeOf(err) : (err as NodeJS.ErrnoException).code;
      const problem = code ? writeProblem({ code }) : `the write failed (${sqliteProblem(err)})`;
      this.parts.logger.error({ err }, 'saving state failed');
      this.failing = `the change could not be saved: ${problem} writing ${DATABASE}`;
      throw new StorageError(this.failing, code);
    }
  }

  /** The system error behind a failed SQLite write: its own code, or what a probe write in the folder meets. */
  private codeOf(err: unknown): string | undefined {
    const code = sqliteCode(err);
    if (code !== 'EIO' && code !== 'EACCES' && code !== undefined) return code;
    return probeWrite(this.dataDir) ?? code;
  }

  /** Every part the store writes, by name: the core parts and the registered areas (rows nobody claimed yet stay as they are). */
  private sources(): Map<string, PartRows> {
    const out = new Map<string, PartRows>();
    for (const part of this.core) out.set(part.name, part);
    for (const area of this.parts.areas.values()) if (area.save) out.set(area.name, areaRows(area));
    return out;
  }

  /** Saved rows of an area that registers after the start, loaded once it does. */
  claim(area: StateArea): void {
    const rows = this.unclaimed.get(area.name);
    if (!rows) {
      // A new area after the start: its part is written with the next commit.
      if (this.db) this.markDirty(area.name);
      return;
    }
    this.unclaimed.delete(area.name);
    const refuse = this.refusal();
    const part = this.areaPart(area, rows, refuse);
    const problem = area.check?.(part);
    if (problem) throw refuse(`part areas.${area.name}: ${problem}`);
    area.load?.(part);
    if (this.rewriteAfterLoad.delete(area.name)) this.markDirty(area.name);
  }

  /**
   * An area's saved part from its rows. An area that declares records but was saved whole (migrated
   * while it was not registered yet) is read whole, and marked to be written again as records.
   */
  private areaPart(area: StateArea, rows: StoredRow[], refuse: Refusal): unknown {
    if (area.records && rows.length === 1 && rows[0]![ID] === WHOLE_PART) {
      this.rewriteAfterLoad.add(area.name);
      return joinRows(keptRows(area.name, undefined), rows, refuse);
    }
    return joinRows(areaRows(area), rows, refuse);
  }

  /** A full reset: saved rows nobody claimed are dropped too. */
  forgetUnclaimed(): void {
    for (const name of this.unclaimed.keys()) this.changes.mark(name);
    this.unclaimed.clear();
  }

  private refusal(): Refusal {
    const file = this.file;
    return (problem) =>
      new SnapshotError(
        `state database ${file} cannot be read (${problem}); move it away (mv ${file} ${file}.bad, and its -wal and -shm files beside it) to start empty`,
      );
  }

  /**
   * Opens the database of the data dir (made on first start, or migrated from a JSON snapshot), checks
   * every part and loads it, after every area present at start has registered. A database or snapshot
   * that cannot be read stops the start with a SnapshotError naming the file and the problem, and stays
   * as it was.
   */
  async load(): Promise<void> {
    if (!this.persistent) return;
    const snapshot = join(this.dataDir, SNAPSHOT);
    if (!this.db) {
      if (existsSync(this.file)) {
        this.db = this.open();
        // A migration stopped between its commit and the rename of the JSON snapshot: finish it.
        if (existsSync(snapshot)) {
          this.keepMigrated(snapshot);
          this.parts.logger.warn(
            `${snapshot} is beside ${this.file} (a migration stopped before renaming it): the database is read, the snapshot kept as ${MIGRATED_SNAPSHOT}`,
          );
        }
      } else if (existsSync(snapshot)) {
        const saved = await readSnapshotFile(snapshot, this.parts.areas, this.parts.accounts.registry);
        this.db = migrateSnapshot(this.file, this.core, this.parts.areas, saved);
        this.keepMigrated(snapshot);
        this.parts.logger.info(`state snapshot ${snapshot} migrated into ${this.file}; the snapshot is kept as ${MIGRATED_SNAPSHOT}`);
      } else this.db = createDatabase(this.file);
      this.writer = new RowWriter(this.db);
      this.checkpointer = new Checkpointer(this.file, () => this.truncateLog());
      this.logSync = new LogSync(this.file, this.parts.logger, this.parts.storageWrites, () => this.db !== null);
    }
    this.loadRows();
  }

  private open(): DatabaseSync {
    try {
      return openDatabase(this.file);
    } catch (err) {
      if (err instanceof UnreadableDatabase) throw this.refusal()(err.message);
      throw err;
    }
  }

  private keepMigrated(snapshot: string): void {
    renameSync(snapshot, join(this.dataDir, MIGRATED_SNAPSHOT));
    syncDirSync(snapshot);
  }

  /** Stored files no record names, removed at start (orphans.ts); the start's banner says how many. */
  sweptFiles = 0;

  private sweepOrphans(named: Set<string>, rows: string[]): number {
    const blobs = join(this.dataDir, 'blobs');
    const removed = sweepOrphanFiles(blobs, named, rows);
    if (removed.length)
      this.parts.logger.info(
        `swept ${removed.length} stored file(s) no record names from ${blobs} (left by a stop between a file's write and its record, or during a reset): ${removed.slice(0, 20).join(', ')}${removed.length > 20 ? `, and ${removed.length - 20} more` : ''}`,
      );
    return removed.length;
  }

  /** Reads every row, joins them into the saved state's shape, checks it whole, then loads it. */
  private loadRows(): void {
    const refuse = this.refusal();
    let rows: ReturnType<typeof readRows>;
    try {
      rows = readRows(this.db!);
    } catch (err) {
      throw refuse(sqliteProblem(err));
    }
    const raw: Record<string, unknown> = { version: SNAPSHOT_VERSION };
    const core = groupBy(rows.parts);
    for (const part of this.core) {
      const saved = core.get(part.name);
      if (saved) raw[part.name === 'clock' ? 'saved_at_ms' : part.name] = joinRows(part, saved, refuse);
      // A part an earlier version kept in one row (the fault rules) is written again as rows.
      if (saved && !part.whole && saved.length === 1 && saved[0]![ID] === WHOLE_PART) this.rewriteAfterLoad.add(part.name);
    }
    const areas: Record<string, unknown> = {};
    this.unclaimed.clear();
    const byArea = groupBy(rows.records);
    for (const [name, saved] of byArea) {
      const area = this.parts.areas.get(name);
      if (area) areas[name] = this.areaPart(area, saved, refuse);
      else this.unclaimed.set(name, saved);
    }
    raw.areas = areas;
    applySaved(this.parts, checkSaved(raw, this.parts.areas, this.parts.accounts.registry, refuse), refuse);
    const named = checkBlobs(byArea, this.parts.areas, this.dataDir, this.file, this.parts.logger);
    this.sweptFiles = this.sweepOrphans(
      named,
      [...rows.parts, ...rows.records].map((r) => r[DATA]),
    );
    // Loading touched what it loaded: nothing of it needs writing, but areas read whole are written as records.
    this.changes.take();
    for (const name of this.rewriteAfterLoad) this.changes.mark(name);
    this.rewriteAfterLoad.clear();
  }
}
