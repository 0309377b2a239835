/**
 * One emulator per data dir. Two emulators on one data dir would hand out the same ids and overwrite each
 * other's rows and files, so the second start is refused, naming the holder.
 *
 * The lock is an operating-system lock, not a file's existence: SQLite's exclusive lock on a small file of
 * its own (`speech-emulator.lock`), held by an open connection for the emulator's life. The kernel drops it
 * when the process ends in any way (`kill -9` included), so a stale lock of a dead process is taken over
 * without asking, also when the data dir is a volume shared by containers on one host. SQLite keeps its
 * locks straight between connections of one process too, so a second in-process emulator is refused as well.
 * Who holds it (pid, host, since when) is written beside it, for the refusal's message only.
 */
import { hostname } from 'node:os';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// Required when this module runs, not linked as an ES import: on a Node.js without node:sqlite, the
// library entry's version check (library-node-check.ts) runs first and says which Node is needed.
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
type DatabaseSync = InstanceType<typeof DatabaseSync>;

export const LOCK_FILE = 'speech-emulator.lock';
export const HOLDER_FILE = 'speech-emulator.lock.holder';

export class DataDirInUse extends Error {}

export class DataDirLock {
  private constructor(
    private readonly db: DatabaseSync,
    private readonly holderFile: string,
  ) {}

  /**
   * Takes the data dir's lock, or throws DataDirInUse naming the emulator that holds it. `since` is the wall
   * time the holder started, shown to a person who must find that process; no rule reads it, and the emulator
   * clock does not exist yet when the lock is taken (it belongs to the state the lock protects).
   */
  static acquire(dataDir: string, since: Date = new Date()): DataDirLock {
    const file = join(dataDir, LOCK_FILE);
    const holderFile = join(dataDir, HOLDER_FILE);
    // Created private, like every file of the data dir (SQLite keeps the mode of an existing file).
    closeSync(openSync(file, 'a', 0o600));
    const db = new DatabaseSync(file);
    try {
      db.exec('PRAGMA busy_timeout = 0');
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      // A write takes the exclusive lock; in EXCLUSIVE locking mode it is kept after the commit.
      db.exec('BEGIN EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS held (since TEXT)');
      db.exec('COMMIT');
    } catch (err) {
      db.close();
      const busy = /locked|busy/i.test((err as Error).message);
      if (!busy) throw err;
      throw new DataDirInUse(
        `data dir ${dataDir} is in use by another speech-emulator (${holderOf(holderFile)}): stop it, or give this one another --data-dir`,
      );
    }
    writeFileSync(holderFile, `${JSON.stringify({ pid: process.pid, host: hostname(), since: since.toISOString() })}\n`, { mode: 0o600 });
    return new DataDirLock(db, holderFile);
  }

  release(): void {
    if (!this.db.isOpen) return;
    rmSync(this.holderFile, { force: true });
    this.db.close();
  }
}

function holderOf(holderFile: string): string {
  try {
    const h = JSON.parse(readFileSync(holderFile, 'utf8')) as { pid?: unknown; host?: unknown; since?: unknown };
    return `pid ${String(h.pid)} on host ${String(h.host)}, since ${String(h.since)}`;
  } catch {
    return 'its pid is not recorded yet';
  }
}
