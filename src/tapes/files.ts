/**
 * Writing a tapes folder's files: atomically (a temporary file, fsynced, then renamed, then the folder fsynced), or, for
 * the bytes a tape references, as they arrive and named by their hash at the end (FileWriter).
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes `data` to `path` atomically: temp file beside it, fsync, rename, fsync of the folder. */
export async function writeAtomic(path: string, data: string | Uint8Array | ((handle: FileHandle) => Promise<void>)): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf('/')) || '.';
  const temp = join(dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    const handle = await open(temp, 'wx');
    try {
      if (typeof data === 'function') await data(handle);
      else await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  syncDir(dir);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse to fsync a folder; the rename is still atomic there.
  }
}

/**
 * A file of `files/` written as its bytes arrive, hashed on the way, named by its hash at the end. Past a bound the
 * bytes spill to a temporary file; a spill that fails (a full disk) is kept and thrown by `finish()`, never left as an
 * unhandled rejection, and the temporary file's handle is always closed by `finish()` or `abandon()`.
 */
export class FileWriter {
  private readonly hash = createHash('sha256');
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private held = 0;
  /** Bytes handed to a spill not yet finished. */
  private writing = 0;
  /** The temporary file once opened (closed by finish or abandon, whatever happened to the writes). */
  private handle: FileHandle | null = null;
  /** The spills in order; never rejects (the first failure is kept in `failure`). */
  private spilling: Promise<void> | null = null;
  private failure: Error | null = null;
  private readonly temp: string;
  /** Bytes kept in memory before the writer spills to its temporary file (a long stream stays bounded). */
  private static readonly MEMORY_LIMIT = 1 << 20;

  constructor(
    private readonly store: { readonly filesDir: string; putNamed(name: string, bytes: Uint8Array): Promise<void> },
    private readonly ext: string,
  ) {
    this.temp = join(store.filesDir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  }

  /** Bytes written so far: the offset the next chunk starts at. */
  get offset(): number {
    return this.size;
  }

  /** Adds a chunk; the reference to it (offset, length) within the file to be. */
  add(chunk: Uint8Array): { offset: number; bytes: number } {
    const at = this.size;
    this.hash.update(chunk);
    this.size += chunk.length;
    // After a failure nothing more is kept: the file is lost, finish() says so.
    if (!this.failure) {
      this.chunks.push(Buffer.from(chunk));
      this.held += chunk.length;
      if (this.held > FileWriter.MEMORY_LIMIT) this.spill();
    }
    return { offset: at, bytes: chunk.length };
  }

  /** Bytes not yet on disk: held, or being written. */
  get backlog(): number {
    return this.held + this.writing;
  }

  /** Resolves once what was queued for the temporary file is written (a reader that outpaces the disk waits for it). */
  async settled(): Promise<void> {
    await this.spilling;
  }

  /** Queues the held chunks for the temporary file (after the spills before them). */
  private spill(): Promise<void> {
    const pending = this.chunks.splice(0);
    const bytes = this.held;
    this.held = 0;
    this.writing += bytes;
    const previous = this.spilling ?? Promise.resolve();
    this.spilling = previous.then(async () => {
      try {
        if (this.failure) return;
        this.handle ??= await open(this.temp, 'wx');
        // One write for the batch: a chunk at a time would fall behind a fast stream, its chunks piling up in memory.
        await this.handle.write(Buffer.concat(pending));
      } catch (err) {
        this.failure = err as Error;
      } finally {
        this.writing -= bytes;
      }
    });
    return this.spilling;
  }

  /** The file's name once whole and on disk (fsynced, renamed to its hash); throws the first write that failed. */
  async finish(): Promise<string> {
    const name = `${this.hash.digest('hex')}.${this.ext}`;
    if (this.spilling) {
      await this.spill();
      if (this.failure) {
        await this.abandon();
        throw this.failure;
      }
      const handle = this.handle!;
      this.handle = null;
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (await exists(join(this.store.filesDir, name))) await rm(this.temp, { force: true });
      else await rename(this.temp, join(this.store.filesDir, name));
      syncDir(this.store.filesDir);
    } else {
      await this.store.putNamed(name, Buffer.concat(this.chunks));
    }
    return name;
  }

  /** Drops what was written (the exchange failed: no tape, no file). */
  async abandon(): Promise<void> {
    this.failure ??= new Error('the file was abandoned');
    this.chunks.length = 0;
    await this.spilling;
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => undefined);
    await rm(this.temp, { force: true }).catch(() => undefined);
  }
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
