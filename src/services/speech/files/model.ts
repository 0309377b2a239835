/**
 * The speech service's files (`/v1/files/*`): uploads of clone samples, prompt audio and async text,
 * and the outputs of async synthesis. A file belongs to one account; ids are seeded integers below 2^53.
 * Bytes are blobs under `speech-files/<account>/`. An async output becomes visible when its task
 * succeeds and is gone 9 h later; video uploads are gone 7 days after their upload (both on the emulator
 * clock). What each upload purpose accepts is in `purposes.ts`.
 */
import { open } from 'node:fs/promises';
import * as z from 'zod';
import { areaOf, checkWith, recordArea, type RecordArea } from '../../../core/state/areas.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { invalidParams, SpeechError } from '../errors.js';
import { numericId } from '../reply.js';
import { CONTENT_TYPES, type FileFormat } from './purposes.js';

/** Validity of a `download_url` for an uploaded file. */
export const FILE_URL_TTL_MS = 24 * 3600 * 1000;
/** Life of an async output from the moment its task succeeded. */
export const ASYNC_OUTPUT_TTL_MS = 9 * 3600 * 1000;

export interface FileRecord {
  file_id: number;
  account_id: string;
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: string;
  format: FileFormat;
  blob: string;
  /** Async outputs: visible from this time (the task's success) … */
  ready_at_ms?: number;
  /** … until this one, when the file is gone (async outputs and video uploads). */
  expires_at_ms?: number;
}

const AREA = 'speech-files';

export type FilesArea = RecordArea<number, FileRecord>;

export function filesArea(emu: Emulator): FilesArea {
  return areaOf(emu, AREA, () =>
    recordArea<number, FileRecord>({
      name: AREA,
      idOf: (f) => f.file_id,
      accountOf: (f) => f.account_id,
      // A file whose time is over is swept with its bytes at first use: only the others must be there.
      blobs: (f) => (f.expires_at_ms !== undefined && emu.clock.now() >= f.expires_at_ms ? [] : [f.blob]),
      record: checkWith(
        z.looseObject({
          file_id: z.number().int(),
          account_id: z.string().min(1),
          bytes: z.number(),
          created_at: z.number(),
          filename: z.string(),
          purpose: z.string(),
          format: z.string(),
          blob: z.string().min(1),
          ready_at_ms: z.number().optional(),
          expires_at_ms: z.number().optional(),
        }),
      ),
      listed: (byId) => [...byId.values()].filter((f) => visible(emu, f)),
      show: (f) => ({ ...fileObject(f), format: f.format }),
      alsoReset: (accountId) => void emu.blobs.removeTree(accountId === undefined ? 'speech-files' : `speech-files/${accountId}`).catch(() => undefined),
    }),
  );
}

/** A fresh file id, unique in this emulator. */
export function newFileId(emu: Emulator, account: Account): number {
  const area = filesArea(emu);
  for (;;) {
    const id = numericId(emu, `${account.id}:files`);
    if (!area.byId.has(id)) return id;
  }
}

export function blobOf(account: Account, fileId: number, format: FileFormat): string {
  return `speech-files/${account.id}/${fileId}.${format}`;
}

function visible(emu: Emulator, f: FileRecord): boolean {
  const now = emu.clock.now();
  if (f.ready_at_ms !== undefined && now < f.ready_at_ms) return false;
  return f.expires_at_ms === undefined || now < f.expires_at_ms;
}

/** Drops files whose time is over (async outputs, video uploads), with their bytes. */
function sweep(emu: Emulator): void {
  const area = filesArea(emu);
  const now = emu.clock.now();
  for (const [id, f] of area.byId) {
    if (f.expires_at_ms !== undefined && now >= f.expires_at_ms) {
      area.byId.delete(id);
      void emu.blobs.removeTree(f.blob).catch(() => undefined); // synchronous: gone before any answer
      emu.markDirty(AREA, f.account_id, id);
    }
  }
}

export function addFile(emu: Emulator, record: FileRecord): void {
  filesArea(emu).byId.set(record.file_id, record);
  emu.markDirty(AREA, record.account_id, record.file_id);
}

/** A file id as a request gives it: ids beyond 2^53 are well-formed but name no file (ours are smaller). */
export type FileIdValue = number | bigint;

/**
 * The account's file of that id for the file operations themselves (list, retrieve, delete), or 2013
 * naming the field. Another account's file is answered exactly like an unknown one.
 */
export function ownFile(emu: Emulator, account: Account, fileId: FileIdValue, opts: { field?: string; code?: number } = {}): FileRecord {
  sweep(emu);
  const f = typeof fileId === 'number' ? filesArea(emu).byId.get(fileId) : undefined;
  if (f && f.account_id === account.id && visible(emu, f)) return f;
  const field = opts.field ?? 'file_id';
  const detail = `${field} ${fileId} is not a file of this account (unknown, deleted, expired or not ready yet)`;
  throw opts.code && opts.code !== 2013 ? new SpeechError(opts.code, `invalid samples or voice_id, ${detail}`) : invalidParams(detail);
}

/**
 * The account's file of that id for an operation that uses its content (synthesis, cloning), or the
 * error the operation gives (2013 naming the field by default; voice cloning passes 20132). Files of
 * purpose `retrieval` are stored unchecked, so every such use refuses them with 2013 naming the field.
 */
export function findFile(emu: Emulator, account: Account, fileId: number, opts: { field?: string; code?: number } = {}): FileRecord {
  const f = ownFile(emu, account, fileId, opts);
  if (f.purpose === 'retrieval')
    throw invalidParams(`${opts.field ?? 'file_id'} ${fileId} was uploaded with purpose retrieval, which synthesis and voice cloning do not accept`);
  return f;
}

/** The account's files of a purpose, oldest first; without a purpose, all of them, newest first. */
export function listFiles(emu: Emulator, account: Account, purpose?: string): FileRecord[] {
  sweep(emu);
  const mine = [...filesArea(emu).byId.values()].filter((f) => f.account_id === account.id && visible(emu, f));
  if (purpose !== undefined) return mine.filter((f) => f.purpose === purpose).sort((a, b) => a.created_at - b.created_at || a.file_id - b.file_id);
  // Insertion order breaks ties of one second: the later upload comes first (the sort is stable).
  return mine.reverse().sort((a, b) => b.created_at - a.created_at);
}

/** Deletes the account's file; a given purpose must be the file's own. */
export async function deleteFile(emu: Emulator, account: Account, fileId: FileIdValue, purpose: string | undefined): Promise<FileRecord> {
  const f = ownFile(emu, account, fileId);
  if (purpose !== undefined && f.purpose !== purpose) throw invalidParams(`purpose ${purpose} does not match the file's purpose ${f.purpose}`);
  filesArea(emu).byId.delete(f.file_id);
  emu.markDirty(AREA, f.account_id, f.file_id);
  // The record is gone on disk before its bytes are: a crash in between never leaves a record naming a missing file.
  await emu.persist();
  await emu.blobs.remove(f.blob).catch(() => undefined);
  return f;
}

/** The documented FileObject. */
export function fileObject(f: FileRecord) {
  return { file_id: f.file_id, bytes: f.bytes, created_at: f.created_at, filename: f.filename, purpose: f.purpose };
}

export function contentTypeOfFile(f: FileRecord): string {
  return CONTENT_TYPES[f.format];
}

/** Reads the first bytes of a blob (content sniffing never needs the whole file). */
export async function headOf(emu: Emulator, rel: string, bytes = 65536): Promise<Buffer> {
  const fh = await open(emu.blobs.file(rel), 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
