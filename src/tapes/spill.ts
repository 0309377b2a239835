/**
 * Lines written to a temporary file as they come, read back in order at the end: a long socket's timeline (one line
 * per frame) is never held whole in memory, whatever its length. At most `HOLD_LINES` lines (or `HOLD_BYTES`) wait in
 * memory for the next write. A write that fails (a full disk) is kept and thrown by `close()`, never left as an
 * unhandled rejection; the file is removed by `remove()` whatever happened.
 */
import { createReadStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export class LineSpill {
  /** Lines kept in memory before they are written (the bound on what a timeline holds). */
  static readonly HOLD_LINES = 256;
  static readonly HOLD_BYTES = 256 * 1024;

  private pending: string[] = [];
  private pendingBytes = 0;
  /** Lines handed to a write that has not finished yet. */
  private writing = 0;
  private chain: Promise<void> = Promise.resolve();
  private handle: FileHandle | null = null;
  private failure: Error | null = null;
  private closed = false;
  private count = 0;

  constructor(readonly path: string) {}

  /** Lines added so far. */
  get lines(): number {
    return this.count;
  }

  /** Lines in memory, not yet on disk. */
  get held(): number {
    return this.pending.length + this.writing;
  }

  add(line: string): void {
    // Once closed or removed, nothing more belongs to it; after a failure nothing more is kept (close() says so).
    if (this.closed) return;
    this.count++;
    if (this.failure) return;
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pending.length >= LineSpill.HOLD_LINES || this.pendingBytes >= LineSpill.HOLD_BYTES) this.flush();
  }

  /** Queues the pending lines for the file (after the writes before them). */
  private flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (!batch.length) return this.chain;
    this.writing += batch.length;
    this.chain = this.chain.then(async () => {
      try {
        if (this.failure) return;
        this.handle ??= await open(this.path, 'wx');
        await this.handle.write(`${batch.join('\n')}\n`);
      } catch (err) {
        this.failure = err as Error;
      } finally {
        this.writing -= batch.length;
      }
    });
    return this.chain;
  }

  /** Writes what is left and closes the file; throws the first write that failed. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
    if (this.failure) throw this.failure;
  }

  /** The lines in the order they were added (after `close()`), read from the file a piece at a time. */
  async *read(): AsyncGenerator<string> {
    if (this.count === 0) return;
    const lines = createInterface({ input: createReadStream(this.path, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) if (line) yield line;
  }

  /** Removes the file (once its lines are read, or when the exchange is not kept). */
  async remove(): Promise<void> {
    this.closed = true;
    this.pending = [];
    this.failure ??= new Error('the spill was removed');
    await this.chain;
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => undefined);
    await rm(this.path, { force: true }).catch(() => undefined);
  }
}
