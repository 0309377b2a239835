/**
 * Multipart forms (uploads, voice cloning) are never held whole: the body is read as it arrives, bounded by its route's
 * limit (past it the family's 413), written to a temporary file beside the tapes and, while recording, passed on to
 * the upstream at the same time. The form is then parsed from that file as a stream: fields by value, each file part
 * by the SHA-256 of its content (stored in `files/` while recording, only hashed for matching).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { once } from 'node:events';
import { Busboy } from '@fastify/busboy';
import { sniffExtension } from './body.js';
import { CREDENTIAL_MARKER, extensionOf, type TapeBody, type TapePart, type TapeRequest } from './format.js';
import { clientLeft, CREDENTIAL_FIELDS, tapeRequestHead, tooLarge } from './request.js';
import type { FileWriter } from './files.js';
import type { TapeStore } from './store.js';

export function isMultipart(raw: IncomingMessage): boolean {
  return /^multipart\/form-data/i.test(raw.headers['content-type'] ?? '');
}

/** A request body read into a temporary file as it arrives (and passed on to `forward` as it does, when asked). */
export class StreamedBody {
  /** The bytes as they arrive, for the upstream (ended with the body; destroyed when the body fails). */
  readonly forward: PassThrough | null;
  /** Settles once the whole body is on disk; rejects past the limit or when the client leaves. */
  readonly done: Promise<void>;
  /** Why the body failed (set as soon as it did). */
  failure: Error | null = null;
  size = 0;
  private readonly path: string;

  constructor(raw: IncomingMessage, limit: number, dir: string, { forward }: { forward: boolean }) {
    this.path = join(dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}.body`);
    this.forward = forward ? new PassThrough() : null;
    this.done = this.read(raw, limit).catch((err: Error) => {
      this.failure = err;
      this.forward?.destroy(err);
      throw err;
    });
    // Seen by whoever awaits it; never an unhandled rejection when nobody does.
    this.done.catch(() => undefined);
  }

  private async read(raw: IncomingMessage, limit: number): Promise<void> {
    if (Number(raw.headers['content-length']) > limit) throw tooLarge(limit);
    const file = createWriteStream(this.path, { flags: 'wx' });
    const fileFailed = once(file, 'error').then(([err]) => {
      throw err as Error;
    });
    fileFailed.catch(() => undefined);
    // A client that leaves while its body waits for the file or the upstream: the wait ends, the read says why.
    // Settled either way: `once` rejects when the request emits 'error' first (a client gone mid-body: "aborted"), and
    // nobody may be waiting on it then.
    const gone = once(raw, 'close').then(
      () => undefined,
      () => undefined,
    );
    try {
      try {
        for await (const chunk of raw as AsyncIterable<Buffer>) {
          this.size += chunk.length;
          if (this.size > limit) throw tooLarge(limit);
          const forward = this.forward && !this.forward.destroyed ? this.forward : null;
          const a = file.write(chunk);
          const b = forward ? forward.write(chunk) : true;
          // Read no faster than the file and the upstream take it (an upstream that went first takes no more).
          if (!a) await Promise.race([drained(file), fileFailed, gone]);
          if (!b && forward) await Promise.race([drained(forward), gone]);
        }
      } catch (err) {
        if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (err as NodeJS.ErrnoException).syscall) throw err;
        throw clientLeft((err as Error).message);
      }
      if (!raw.complete) throw clientLeft();
      if (this.forward && !this.forward.destroyed) this.forward.end();
      file.end();
      await Promise.race([once(file, 'finish'), fileFailed]);
    } catch (err) {
      file.destroy();
      throw err;
    }
  }

  /** The body's bytes, from its file (after `done`). */
  bytes(): Readable {
    return createReadStream(this.path);
  }

  async remove(): Promise<void> {
    await rm(this.path, { force: true }).catch(() => undefined);
  }
}

/** Resolves once `stream` takes writes again, or is gone (its listeners removed either way). */
export function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const go = () => {
      stream.off('drain', go);
      stream.off('close', go);
      resolve();
    };
    stream.on('drain', go);
    stream.on('close', go);
  });
}

/** A file part's content as it streams: hashed, and written to `files/` when a store is given. */
class PartFile {
  private readonly hash = createHash('sha256');
  private head = Buffer.alloc(0);
  private writer: FileWriter | null = null;
  private ext: string | null = null;

  constructor(
    private readonly store: TapeStore | null,
    private readonly type: string,
  ) {}

  add(chunk: Buffer): void {
    // The extension comes from the type, or from the first bytes when the type says nothing.
    if (this.ext === null && this.head.length + chunk.length < 12 && extensionOf(this.type) === 'bin') {
      this.head = Buffer.concat([this.head, chunk]);
      return;
    }
    if (this.ext === null) this.begin(Buffer.concat([this.head, chunk]));
    else this.take(chunk);
  }

  private begin(first: Buffer): void {
    this.ext = extensionOf(this.type) === 'bin' ? sniffExtension(first) : extensionOf(this.type);
    this.writer = this.store?.fileWriter(this.ext) ?? null;
    this.head = Buffer.alloc(0);
    this.take(first);
  }

  private take(chunk: Buffer): void {
    this.hash.update(chunk);
    this.writer?.add(chunk);
  }

  /** More is waiting for the disk than a part may hold in memory: its reader waits (`settled`). */
  get backlogged(): boolean {
    return (this.writer?.backlog ?? 0) > PartFile.BACKLOG_BYTES;
  }

  async settled(): Promise<void> {
    await this.writer?.settled();
  }

  private static readonly BACKLOG_BYTES = 4 << 20;

  /** The file's name in `files/` (stored, or only named when there is no store). */
  async finish(): Promise<string> {
    if (this.ext === null) this.begin(this.head);
    if (this.writer) return this.writer.finish();
    return `${this.hash.digest('hex')}.${this.ext}`;
  }

  async abandon(): Promise<void> {
    await this.writer?.abandon();
  }
}

/**
 * A multipart form's parts in order, parsed as its bytes stream from `source`; null when it cannot be read. File
 * parts are hashed as they stream (and stored when `store` is given): the form is never held whole.
 */
export async function streamedParts(source: Readable, contentType: string, store: TapeStore | null): Promise<TapePart[] | null> {
  const parts: (TapePart | Promise<TapePart>)[] = [];
  const files: PartFile[] = [];
  try {
    const parser = Busboy({
      headers: { 'content-type': contentType },
      limits: { fieldSize: Infinity, fields: Infinity, files: Infinity, parts: Infinity },
      // A part is a file when it has a file name (as the form parsers of the web read it).
      isPartAFile: (_field, _type, filename) => filename !== undefined,
    });
    parser.on('field', (name: string, value: string) => parts.push({ name, value: CREDENTIAL_FIELDS.test(name) ? CREDENTIAL_MARKER : value }));
    parser.on('file', (name: string, stream: Readable, filename: string, _encoding: string, mimeType: string) => {
      const file = new PartFile(store, mimeType);
      files.push(file);
      const ended = new Promise<void>((resolve, reject) => {
        stream.on('data', (chunk: Buffer) => {
          file.add(chunk);
          // The form is read no faster than its file is written.
          if (!file.backlogged) return;
          stream.pause();
          void file.settled().then(() => stream.resume());
        });
        stream.once('end', resolve);
        stream.once('error', reject);
      });
      parts.push(ended.then(async () => ({ name, filename, content_type: mimeType, file: { $file: await file.finish(), encoding: 'raw' as const } })));
    });
    const finished = new Promise<void>((resolve, reject) => {
      parser.once('finish', resolve);
      parser.once('error', reject);
      source.once('error', reject);
    });
    source.pipe(parser);
    await finished;
    return await Promise.all(parts);
  } catch {
    for (const f of files) await f.abandon();
    return null;
  } finally {
    source.destroy();
  }
}

/**
 * The request of a streamed body as a tape holds it: the form's parts (files stored in `store`, or only hashed when it
 * is null), or the whole body as one file when it is not a form that can be read.
 */
export async function streamedTapeRequest(raw: IncomingMessage, body: StreamedBody, store: TapeStore | null): Promise<TapeRequest> {
  return { ...tapeRequestHead(raw), body: await streamedBodyOf(body, raw.headers['content-type'] ?? '', store) };
}

async function streamedBodyOf(body: StreamedBody, contentType: string, store: TapeStore | null): Promise<TapeBody> {
  await body.done;
  if (body.size === 0) return { none: true };
  const parts = await streamedParts(body.bytes(), contentType, store);
  if (parts) return { multipart: parts };
  const whole = new PartFile(store, contentType);
  for await (const chunk of body.bytes() as AsyncIterable<Buffer>) whole.add(chunk);
  return { file: { $file: await whole.finish(), encoding: 'raw' } };
}
