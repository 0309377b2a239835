/**
 * Files on disk under the data dir (uploads, generated audio, subtitles) and their signed, expiring
 * download links. Writes go to a temporary name and are renamed, so no reader sees half a file. A write
 * the disk refuses (full, read-only) and a stored file that has gone missing are StorageErrors: each
 * family answers them as its internal error, saying what is full or missing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { PRIVATE_DIR, PRIVATE_FILE } from './data-dir.js';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { chunkReleaser } from '../http/memory.js';
import { isStorageFailure, StorageError, writeProblem, type StorageWrites } from './storage.js';

export class BlobPathError extends Error {}
export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`file larger than ${limit} bytes`);
  }
}

export const DOWNLOAD_PREFIX = '/download/';

const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Accepts only plain relative paths of safe segments: no `..`, no absolute paths, no encoded slashes. */
export function checkBlobPath(rel: string): string {
  if (typeof rel !== 'string' || rel.length === 0 || rel.length > 512) throw new BlobPathError('empty or too long path');
  const segments = rel.split('/');
  for (const s of segments) {
    if (!SAFE_SEGMENT.test(s) || s.includes('..')) throw new BlobPathError(`unsafe path segment "${s}"`);
  }
  return segments.join('/');
}

export type SignatureCheck = 'ok' | 'expired' | 'invalid';

export class BlobStore {
  private tmpCounter = 0;

  constructor(
    readonly root: string,
    private readonly secret: Buffer,
    private readonly now: () => number,
    /** With a data dir: each file and its rename are fsynced before a write resolves. */
    private readonly durable = false,
    private readonly writes?: StorageWrites,
  ) {}

  /** Absolute file path of a blob; throws on anything that could leave the store. */
  file(rel: string): string {
    const safe = checkBlobPath(rel);
    const abs = resolve(this.root, safe);
    if (!abs.startsWith(resolve(this.root) + sep)) throw new BlobPathError('path escapes the store');
    return abs;
  }

  async put(rel: string, data: Buffer | Uint8Array | string): Promise<number> {
    const abs = this.file(rel);
    const tmp = `${abs}.tmp-${process.pid}-${++this.tmpCounter}`;
    try {
      await mkdir(dirname(abs), { recursive: true, mode: PRIVATE_DIR });
      this.writes?.check(tmp);
      const file = await open(tmp, 'w', PRIVATE_FILE);
      try {
        await file.writeFile(data);
        if (this.durable) await file.sync();
      } finally {
        await file.close();
      }
      await this.commit(tmp, abs);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw storageFailure(err, rel);
    }
    return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }

  /**
   * Streams into a blob, stopping the moment more than `maxBytes` arrived: the source is drained and
   * discarded, the partial file removed, and BlobTooLargeError thrown. Memory stays flat.
   */
  async putStream(rel: string, source: Readable, maxBytes: number): Promise<number> {
    const abs = this.file(rel);
    const tmp = `${abs}.tmp-${process.pid}-${++this.tmpCounter}`;
    let size = 0;
    let tooLarge = false;
    const release = chunkReleaser();
    const writes = this.writes;
    async function* limited(src: AsyncIterable<Buffer>) {
      for await (const chunk of src) {
        // A simulated full disk fails where a real one does: while the body is being written.
        writes?.check(tmp);
        release(chunk.length);
        if (tooLarge) continue; // keep reading so the client gets its answer, but keep nothing
        size += chunk.length;
        if (size > maxBytes) {
          tooLarge = true;
          continue;
        }
        yield chunk;
      }
    }
    try {
      await mkdir(dirname(abs), { recursive: true, mode: PRIVATE_DIR });
      await pipeline(source, limited, createWriteStream(tmp, { mode: PRIVATE_FILE }));
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw storageFailure(err, rel);
    }
    if (tooLarge) {
      await rm(tmp, { force: true });
      throw new BlobTooLargeError(maxBytes);
    }
    try {
      if (this.durable) await syncPath(tmp, 'r+');
      await this.commit(tmp, abs);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw storageFailure(err, rel);
    }
    return size;
  }

  /** Renames a finished temporary file into place (and makes the rename durable with a data dir). */
  private async commit(tmp: string, abs: string): Promise<void> {
    this.writes?.check(abs);
    await rename(tmp, abs);
    if (this.durable) await syncPath(dirname(abs), 'r');
  }

  /** Moves a blob to another path of the store (durably with a data dir). */
  async move(fromRel: string, toRel: string): Promise<void> {
    const target = this.file(toRel);
    try {
      await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR });
      await this.commit(this.file(fromRel), target);
    } catch (err) {
      throw storageFailure(err, toRel);
    }
  }

  /** A stored file's bytes; one that has gone from the data dir is a StorageError naming it. */
  async read(rel: string): Promise<Buffer> {
    const abs = this.file(rel);
    try {
      return await readFile(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw this.missing(rel);
      throw err;
    }
  }

  /** The error for a stored file a record points at but the data dir no longer holds (removed outside the emulator). */
  missing(rel: string): StorageError {
    return new StorageError(`the stored file ${rel} is missing from the data dir (${this.root} no longer holds it)`, 'ENOENT');
  }

  readStream(rel: string): Readable {
    return createReadStream(this.file(rel));
  }

  async size(rel: string): Promise<number | null> {
    try {
      return (await stat(this.file(rel))).size;
    } catch {
      return null;
    }
  }

  async remove(rel: string): Promise<void> {
    await rm(this.file(rel), { force: true });
  }

  /**
   * Removes a folder of blobs (an account's files on reset). Synchronous on purpose: a reset has removed
   * the files by the time it answers, and a file written right after it can never be swept away late.
   */
  removeTree(relDir: string): Promise<void> {
    try {
      rmSync(join(this.root, checkBlobPath(relDir)), { recursive: true, force: true });
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** Path and query of a signed link to `rel`, valid until `expiresMs` on the emulator clock. */
  signedPath(rel: string, expiresMs: number): string {
    const safe = checkBlobPath(rel);
    const expires = Math.floor(expiresMs);
    return `${DOWNLOAD_PREFIX}${safe}?expires=${expires}&sig=${this.sign(safe, expires)}`;
  }

  verify(rel: string, expires: string | undefined, sig: string | undefined): SignatureCheck {
    if (!expires || !sig || !/^\d+$/.test(expires)) return 'invalid';
    let safe: string;
    try {
      safe = checkBlobPath(rel);
    } catch {
      return 'invalid';
    }
    const want = Buffer.from(this.sign(safe, Number(expires)));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
    return this.now() > Number(expires) ? 'expired' : 'ok';
  }

  private sign(rel: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${rel}\n${expires}`).digest('base64url');
  }
}

/** A write the disk refused, as a StorageError saying so; anything else (the client's stream broke) as it was. */
function storageFailure(err: unknown, rel: string): unknown {
  if (err instanceof StorageError || !isStorageFailure(err)) return err;
  return new StorageError(`the file ${rel} could not be stored: ${writeProblem(err)}`, (err as NodeJS.ErrnoException).code);
}

async function syncPath(path: string, flags: string): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function contentTypeOf(rel: string): string {
  const ext = rel.slice(rel.lastIndexOf('.') + 1).toLowerCase();
  return (
    (
      {
        mp3: 'audio/mpeg',
        wav: 'audio/wav',
        flac: 'audio/flac',
        pcm: 'audio/pcm',
        m4a: 'audio/mp4',
        json: 'application/json',
        txt: 'text/plain; charset=utf-8',
        png: 'image/png',
        jpg: 'image/jpeg',
        jpeg: 'image/jpeg',
        mp4: 'video/mp4',
      } as Record<string, string>
    )[ext] ?? 'application/octet-stream'
  );
}
