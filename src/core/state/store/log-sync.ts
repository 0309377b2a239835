/**
 * The fsync of the state database's write-ahead log (`state.db-wal`) after a commit: the connection
 * commits with `synchronous=NORMAL` (frames written, no fsync, on the event loop) and this syncs them
 * in the thread pool, before the answers that wait for them leave (docs/state-store.md says why the
 * file fsynced by name is the one written). The fsync running is known to later answers: an answer
 * with nothing of its own to commit still waits for it, since what it shows may be what it holds.
 */
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Logger } from 'pino';
import { StorageError, writeProblem, type StorageWrites } from '../storage.js';
import { DATABASE } from './database.js';

export class LogSync {
  /** The fsync of the latest commit while it runs. */
  private running: Promise<void> | null = null;
  private readonly log: string;

  constructor(
    file: string,
    private readonly logger: Logger,
    private readonly writes: StorageWrites,
    /** Whether the database is still open (once closed, its close checkpointed the log and removed it). */
    private readonly open: () => boolean,
  ) {
    this.log = `${file}-wal`;
  }

  /** The fsync an answer must wait for, when one runs. */
  inFlight(): Promise<void> | null {
    return this.running;
  }

  /**
   * Syncs the log after a commit. `failed` runs when it fails, before the rejection reaches anyone: the
   * store marks the commit's changes again, since after a failed fsync the kernel may have dropped them.
   */
  afterCommit(failed: () => void): Promise<void> {
    const sync = this.syncLog().catch((err: unknown) => {
      failed();
      throw err;
    });
    this.running = sync;
    const done = () => {
      if (this.running === sync) this.running = null;
    };
    sync.then(done, done);
    return sync;
  }

  /** Syncs the log now, on the calling thread (the last commit, at close). */
  syncNow(): void {
    try {
      this.writes.check(this.log);
      const fd = openSync(this.log, 'r');
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async syncLog(): Promise<void> {
    try {
      const log = await open(this.log, 'r');
      try {
        this.writes.check(this.log);
        await log.datasync();
      } finally {
        await log.close();
      }
    } catch (err) {
      // The database closed meanwhile: its close checkpointed the log into the synced file and removed it.
      if (!this.open() && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw this.failure(err);
    }
  }

  private failure(err: unknown): StorageError {
    const code = (err as NodeJS.ErrnoException).code;
    this.logger.error({ err }, 'saving state failed');
    return new StorageError(`the change could not be saved: ${code ? writeProblem({ code }) : `the write failed (${String(err)})`} writing ${DATABASE}`, code);
  }
}
