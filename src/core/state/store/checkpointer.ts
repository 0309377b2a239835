/**
 * Checkpoints of the write-ahead log, off the event loop. SQLite copies the log back into the database
 * file every so often (a checkpoint: megabytes copied and fsynced); done by the committing connection,
 * it would stall every request while it runs. Here the database's own connection never checkpoints
 * (`wal_autocheckpoint = 0`), and a worker thread with a connection of its own runs a passive
 * checkpoint (which never blocks the writer) once a second after commits. A checkpoint that does not
 * run only lets the log grow; it never loses a committed change.
 */
import { Worker } from 'node:worker_threads';

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

export class Checkpointer {
  private readonly worker: Worker;
  private readonly timer: NodeJS.Timeout;
  private commits = 0;

  constructor(file: string) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { file } });
    // A worker that fails (it cannot open the file) leaves checkpoints to the database's close.
    this.worker.on('error', () => undefined);
    this.worker.unref();
    this.timer = setInterval(() => {
      if (this.commits === 0) return;
      this.commits = 0;
      this.worker.postMessage('checkpoint');
    }, 1000);
    this.timer.unref();
  }

  /** Counts a commit: the next tick of the timer checkpoints. */
  committed(): void {
    this.commits += 1;
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
