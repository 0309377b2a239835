/**
 * The SQLite file of a data dir (`state.db`, node:sqlite): opened only after it proves readable (a
 * database, of a schema this version knows, passing `PRAGMA quick_check`), then put in WAL mode with
 * `synchronous=NORMAL`: a commit writes its frames to the log without an fsync (it survives `kill -9`),
 * and the store fsyncs the log off the event loop before acknowledging it (state-store.ts), so it
 * survives power loss too. A new database is made
 * under a temporary name and renamed into place, so a crash never leaves a half-made one behind.
 */
import { chmodSync, closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PRIVATE_FILE } from '../data-dir.js';
import { syncDirSync } from './files.js';

// Required when this module runs, not linked as an ES import: on a Node.js without node:sqlite, the
// library entry's version check (library-node-check.ts) runs first and says which Node is needed.
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
type DatabaseSync = InstanceType<typeof DatabaseSync>;

export const DATABASE = 'state.db';
/** The schema this version writes and reads (`PRAGMA user_version`). */
export const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE records (
  area TEXT NOT NULL,
  id TEXT NOT NULL,
  account TEXT,
  seq INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (area, id)
) WITHOUT ROWID;
CREATE INDEX records_by_account ON records (area, account);
CREATE TABLE parts (
  part TEXT NOT NULL,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (part, key)
) WITHOUT ROWID;
PRAGMA user_version = ${SCHEMA_VERSION};
`;

/** The database cannot be opened as it is: the start stops with this problem, and the file stays as it was. */
export class UnreadableDatabase extends Error {}

/** Opens an existing database after checking it can be read; throws UnreadableDatabase naming the problem. */
export function openDatabase(file: string): DatabaseSync {
  if (statSync(file).size === 0 && !existsSync(`${file}-wal`)) throw new UnreadableDatabase('the file is empty');
  // A database an older version left readable by others is made private (its log files follow its mode).
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(f, PRIVATE_FILE);
    } catch {
      // Missing, or a read-only data dir: nothing to tighten, and reading it is still allowed.
    }
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file);
  } catch (err) {
    throw new UnreadableDatabase(sqliteProblem(err));
  }
  try {
    const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
    if (version > SCHEMA_VERSION)
      throw new UnreadableDatabase(`its schema version ${version} was written by a newer emulator; this one reads version ${SCHEMA_VERSION}`);
    if (version < 1) throw new UnreadableDatabase(`it holds no emulator state (schema version ${version})`);
    const check = db.prepare('PRAGMA quick_check').all() as { quick_check: string }[];
    const problems = check
      .flatMap((r) => r.quick_check.split('\n'))
      .map((line) => line.trim())
      .filter((line) => line && line !== 'ok' && !line.startsWith('***'));
    if (problems.length)
      throw new UnreadableDatabase(`it fails its integrity check: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`);
    tune(db);
    return db;
  } catch (err) {
    db.close();
    throw err instanceof UnreadableDatabase ? err : new UnreadableDatabase(sqliteProblem(err));
  }
}

/**
 * Makes a database at `file` holding the schema and whatever `fill` writes, in one transaction, under a
 * temporary name renamed into place once it is complete and on disk; then opens it.
 */
export function createDatabase(file: string, fill: (db: DatabaseSync) => void = () => {}): DatabaseSync {
  const tmp = `${file}.new`;
  rmSync(tmp, { force: true });
  rmSync(`${tmp}-journal`, { force: true });
  // Made private before SQLite opens it: SQLite keeps an existing file's mode, and gives its log the same.
  closeSync(openSync(tmp, 'w', PRIVATE_FILE));
  const db = new DatabaseSync(tmp);
  try {
    db.exec('PRAGMA synchronous = FULL');
    db.exec('BEGIN');
    db.exec(SCHEMA);
    fill(db);
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    rmSync(tmp, { force: true });
    throw err;
  }
  db.close();
  renameSync(tmp, file);
  syncDirSync(file);
  const opened = new DatabaseSync(file);
  tune(opened);
  return opened;
}

/** The size the write-ahead log (`state.db-wal`) is cut back to whenever it starts over (docs/state-store.md). */
export const WAL_LIMIT_BYTES = 4 * 1024 * 1024;

/** WAL; the log is fsynced by the store after each commit, in the thread pool, not inside the commit on the event loop. */
function tune(db: DatabaseSync): void {
  db.exec('PRAGMA journal_mode = WAL');
  // NORMAL still syncs the log before each checkpoint, the database after it, and the log's header when it is reused.
  db.exec('PRAGMA synchronous = NORMAL');
  // A busy or locked database is a failure to say, not a wait.
  db.exec('PRAGMA busy_timeout = 0');
  // Checkpoints run in a worker thread (checkpointer.ts), never inside a commit on the event loop.
  db.exec('PRAGMA wal_autocheckpoint = 0');
  // Each time the log starts over (all of it checkpointed), a file grown past this is cut back to it.
  db.exec(`PRAGMA journal_size_limit = ${WAL_LIMIT_BYTES}`);
}

/** The problem of a failed SQLite call in words ("file is not a database"). */
export function sqliteProblem(err: unknown): string {
  const e = err as { errstr?: string; message?: string };
  return e.errstr ?? e.message ?? String(err);
}

/** The system error code a failed SQLite write stands for: ENOSPC for SQLITE_FULL, EROFS, EIO… */
export function sqliteCode(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException & { errcode?: number };
  if (typeof e.errcode !== 'number') return e.code;
  switch (e.errcode & 0xff) {
    case 13: // SQLITE_FULL
      return 'ENOSPC';
    case 8: // SQLITE_READONLY
      return 'EROFS';
    case 10: // SQLITE_IOERR
      return 'EIO';
    case 14: // SQLITE_CANTOPEN
      return 'EACCES';
    case 23: // SQLITE_AUTH
      return 'EACCES';
    default:
      return undefined;
  }
}
