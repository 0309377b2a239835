/**
 * Reading the multipart body of `POST /v1/speech_to_text`: text parts kept by name (the first of
 * each), the `file` part streamed to a temporary file while its SHA-256 and size are taken, other
 * file parts drained. Reading stops as soon as the file part passes 52,428,800 bytes (rule E1): the rest
 * of the body is never read, and the 413 closes the connection. Then random access to the stored file for the container reader, through a small
 * window so only the headers of a long file are read. The file lives in the system's temporary folder,
 * never in the data dir: it is gone when the answer is.
 */
import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { chunkReleaser, discardStream } from '../../../core/http/memory.js';
import type { ByteSource } from '../../../audio/container.js';
import { MAX_FILE_BYTES } from './model.js';

export interface ReceivedForm {
  fields: Map<string, string>;
  /** File parts named `file`. */
  fileParts: number;
  /** The first `file` part, stored (absent when none, or when it passed the size limit). */
  file?: { path: string; size: number; sha256: string };
  /** Size of the first `file` part; once past the limit, the bytes read when reading stopped. */
  fileSize: number;
  /** Reading stopped at the size limit: the rest of the body was never read. */
  overLimit?: boolean;
  /** Filename of the first `file` part. */
  filename?: string;
  /** The temporary folder to remove once answered. */
  dir?: string;
}

/** The file part passed the size limit after `bytes` bytes: reading stops there. */
class OverLimit extends Error {
  constructor(readonly bytes: number) {
    super(`the file part passed ${MAX_FILE_BYTES} bytes`);
  }
}

/** Writes a part to `path`, hashing it; throws OverLimit as soon as it passes the limit. */
async function storePart(source: AsyncIterable<Buffer>, path: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  const release = chunkReleaser();
  let size = 0;
  async function* kept(chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      release(chunk.length);
      size += chunk.length;
      if (size > MAX_FILE_BYTES) throw new OverLimit(size);
      hash.update(chunk);
      yield chunk;
    }
  }
  await pipeline(source, kept, createWriteStream(path, { mode: 0o600 }));
  return { size, sha256: hash.digest('hex') };
}

/** Reads every part; throws what the parts iterator throws (a broken body), after removing the file. */
export async function receiveForm(req: FastifyRequest): Promise<ReceivedForm> {
  const form: ReceivedForm = { fields: new Map(), fileParts: 0, fileSize: 0 };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'field') {
        if (!form.fields.has(part.fieldname)) form.fields.set(part.fieldname, String(part.value ?? ''));
        continue;
      }
      if (part.fieldname !== 'file' || form.fileParts++ > 0) {
        await pipeline(part.file, discardStream());
        continue;
      }
      form.filename = part.filename ?? '';
      form.dir = await mkdtemp(join(tmpdir(), 'emulator-stt-'));
      const path = join(form.dir, 'audio');
      let stored: { size: number; sha256: string };
      try {
        stored = await storePart(part.file, path);
      } catch (err) {
        if (!(err instanceof OverLimit)) throw err;
        form.fileSize = err.bytes;
        form.overLimit = true;
        return form; // nothing more of the body is read
      }
      form.fileSize = stored.size;
      form.file = { path, ...stored };
    }
  } catch (err) {
    await dropForm(form);
    throw err;
  }
  return form;
}

/** Removes the form's temporary file. */
export async function dropForm(form: ReceivedForm): Promise<void> {
  if (form.dir) await rm(form.dir, { recursive: true, force: true }).catch(() => undefined);
}

const WINDOW = 64 * 1024;

/** Random access to a file on disk through one cached window; `close` when done. */
export function fileSource(path: string, size: number): ByteSource & { close(): void } {
  const fd = openSync(path, 'r');
  let windowStart = -1;
  let window: Buffer = Buffer.alloc(0);
  const load = (offset: number, length: number): Buffer => {
    const buf = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, offset + got);
      if (!n) break;
      got += n;
    }
    return buf.subarray(0, got);
  };
  return {
    size,
    bytes(offset, length) {
      offset = Math.max(0, offset);
      if (offset >= size || length <= 0) return Buffer.alloc(0);
      if (length > WINDOW) return load(offset, length);
      if (windowStart < 0 || offset < windowStart || offset + Math.min(length, size - offset) > windowStart + window.length) {
        windowStart = offset;
        window = load(offset, WINDOW);
      }
      return window.subarray(offset - windowStart, Math.min(window.length, offset - windowStart + length));
    },
    close: () => closeSync(fd),
  };
}
