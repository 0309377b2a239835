/**
 * Reading the multipart body of `POST /v1/speech_to_text`: text parts kept by name (the first of
 * each), the `file` part streamed to a temporary blob while its SHA-256 and size are taken (nothing past
 * 52,428,800 bytes is kept or hashed; the rest is drained so the client still gets its 413), other
 * file parts drained. Then random access to the stored file for the container reader, through a small
 * window so only the headers of a long file are read.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { Account } from '../../../core/accounts.js';
import { BlobTooLargeError } from '../../../core/blobs.js';
import type { Emulator } from '../../../core/emulator.js';
import { discardStream } from '../../../core/memory.js';
import type { ByteSource } from '../../../audio/container.js';
import { MAX_FILE_BYTES } from './model.js';

export interface ReceivedForm {
  fields: Map<string, string>;
  /** File parts named `file`. */
  fileParts: number;
  /** The first `file` part, stored (absent when none, or when it passed the size limit). */
  file?: { rel: string; filename: string; size: number; sha256: string };
  /** Size of the first `file` part, counted to its end even past the limit. */
  fileSize: number;
  /** Filename of the first `file` part. */
  filename?: string;
}

async function* counting(source: AsyncIterable<Buffer>, seen: { size: number }, hash: ReturnType<typeof createHash>) {
  for await (const chunk of source) {
    seen.size += chunk.length;
    if (seen.size <= MAX_FILE_BYTES) hash.update(chunk);
    yield chunk;
  }
}

/** Reads every part; throws what the parts iterator throws (a broken body), after removing the blob. */
export async function receiveForm(emu: Emulator, req: FastifyRequest, account: Account): Promise<ReceivedForm> {
  const form: ReceivedForm = { fields: new Map(), fileParts: 0, fileSize: 0 };
  let stored: string | undefined;
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
      const rel = `speech-stt/${account.id}/incoming-${emu.ids.stream(`${account.id}:stt`).hex(16)}`;
      const seen = { size: 0 };
      const hash = createHash('sha256');
      try {
        stored = rel;
        await emu.blobs.putStream(rel, Readable.from(counting(part.file, seen, hash)), MAX_FILE_BYTES);
        form.file = { rel, filename: part.filename ?? '', size: seen.size, sha256: hash.digest('hex') };
      } catch (err) {
        stored = undefined;
        if (!(err instanceof BlobTooLargeError)) throw err;
      }
      form.fileSize = seen.size;
    }
  } catch (err) {
    if (stored) await emu.blobs.remove(stored).catch(() => undefined);
    throw err;
  }
  return form;
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
