/**
 * Checkpoints of the write-ahead log, off the event loop. SQLite copies the log back into the database
 * file every so often (a checkpoint: megabytes copied and fsynced); done by the committing connection,
 * it would stall every request while it runs. Here the database's own connection never checkpoints
 * (`wal_autocheckpoint = 0`), and a worker thread with a connection of its own runs a passive
 * checkpoint (which never blocks the writer) once a second after commits. A checkpoint that does not
 * run only lets the log grow; it never loses a committed change.
 *
 * The log's file: a log starts over only when a commit finds it wholly checkpointed, which a steady
 * stream of commits never lets happen. So the store truncates it (`truncate`: a TRUNCATE checkpoint on
 * the store's own connection, between two commits, so it never races one; the passive checkpoints have
 * copied most of the log already) when it passes WAL_LIMIT_BYTES after a commit, and once commits stop
 * for IDLE_MS. An idle emulator's log is empty; a busy one's stays near WAL_LIMIT_BYTES.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { WAL_LIMIT_BYTES } from './database.js';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // Tried again after the next commits.
  }
});
`;

/** How long without a commit before the log is truncated. */
export const IDLE_MS = 2000;
const TICK_MS = 1000;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly timer: NodeJS.Timeout;
  private commits = 0;
  /** Ticks without a commit since the last one; the log is truncated once, when they reach IDLE_MS. */
  private quietTicks = 0;
  private truncated = true;

  private readonly log: string;

  constructor(
    file: string,
    private readonly truncate: () => void = () => undefined,
  ) {
    this.log = `${file}-wal`;
    this.worker = new Worker(WORKER, { eval: true, workerData: { file } });
    // A worker that fails (it cannot open the file) leaves checkpoints to the database's close.
    this.worker.on('error', () => undefined);
    this.worker.unref();
    this.timer = setInterval(() => {
      if (this.commits === 0) {
        // The passive checkpoint of the last tick with commits has run since: the log can be cut to nothing.
        if (!this.truncated && ++this.quietTicks * TICK_MS > IDLE_MS) {
          this.truncated = true;
          this.truncate();
        }
        return;
      }
      this.commits = 0;
      this.quietTicks = 0;
      this.truncated = false;
      this.worker.postMessage('checkpoint');
    }, TICK_MS);
    this.timer.unref();
  }

  /** Counts a commit: the next tick of the timer checkpoints; a log past its limit is truncated now. */
  committed(): void {
    this.commits += 1;
    if ((statSync(this.log, { throwIfNoEntry: false })?.size ?? 0) > WAL_LIMIT_BYTES) this.truncate();
  }

  /** Stops checkpointing (the database's close checkpoints a last time). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    // Held until the worker has closed its connection: the process waits for it.
    this.worker.ref();
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    await this.worker.terminate();
  }
}
