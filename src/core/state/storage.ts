/**
 * Storage failures of a data dir, as one error every family renders as its internal error (speech 1000,
 * platform 10000, control plane 500) with a message that says what is missing or full, and the write
 * failures a test can simulate: the emulator runs as any user, and root writes through `chmod`, so a
 * read-only or full data dir is reproduced by failing the write path itself (`StorageWrites.fail`).
 */

/** The state or a file of the data dir could not be written or read back: the answer is an internal error. */
export class StorageError extends Error {
  constructor(
    message: string,
    /** The system error code behind it (ENOSPC, EROFS, ENOENT…), when there is one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

/** Codes that mean the data dir itself cannot take the write (not the client's input). */
const STORAGE_CODES = new Set(['ENOSPC', 'EROFS', 'EDQUOT', 'EIO', 'EACCES', 'EPERM', 'EFBIG', 'EMFILE', 'ENFILE']);

/** Whether `err` is a failure of the disk under the data dir rather than of the request. */
export function isStorageFailure(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.has(code);
}

/** A phrase for a failed write: "the disk is full (ENOSPC)", "the data dir is read-only (EROFS)"… */
export function writeProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `the disk of the data dir is full (${e.code})`;
    case 'EROFS':
      return 'the data dir is read-only (EROFS)';
    case 'EACCES':
    case 'EPERM':
      return `the data dir is not writable (${e.code})`;
    default:
      return e.code ? `the write failed (${e.code})` : `the write failed (${e.message})`;
  }
}

/**
 * The write path's switch for simulated failures: while set, every commit of the state database and every
 * write of a stored file fails with that system error code, as a full disk or a read-only remount would.
 */
export class StorageWrites {
  private failing: string | null = null;
  private onlyEnding: string | undefined;

  /**
   * Every later write fails with `code` (ENOSPC, EIO…); null writes again. With `onlyEnding`, only writes
   * of paths ending so fail (`state.db-wal`: the commit succeeds, the fsync of its log fails).
   */
  fail(code: string | null, onlyEnding?: string): void {
    this.failing = code;
    this.onlyEnding = onlyEnding;
  }

  /** Throws the simulated failure for a write of `path`, if one is set. */
  check(path: string): void {
    if (!this.failing || (this.onlyEnding !== undefined && !path.endsWith(this.onlyEnding))) return;
    const err = new Error(`${this.failing}: simulated write failure, open '${path}'`) as NodeJS.ErrnoException;
    err.code = this.failing;
    err.path = path;
    throw err;
  }
}
