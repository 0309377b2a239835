import { areaOf, recordArea, type RecordArea } from '../../../core/areas.js';
import { open } from 'node:fs/promises';
import { sniffFormat } from '../../../audio/probe.js';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { invalidParams, SpeechError } from '../errors.js';
import { numericId } from '../reply.js';

/**
 * The speech service's files (`/v1/files/*`): uploads of clone samples, prompt audio and async text,
 * and the outputs of async synthesis. A file belongs to one account; ids are seeded integers below 2^53.
 * Bytes are blobs under `speech-files/<account>/`. An async output becomes visible when its task
 * succeeds and is gone 9 h later (both on the emulator clock).
 */
export const UPLOAD_PURPOSES = ['voice_clone', 'prompt_audio', 't2a_async_input'] as const;
export const LIST_PURPOSES = [...UPLOAD_PURPOSES, 't2a_async'] as const;
export const DELETE_PURPOSES = ['voice_clone', 'prompt_audio', 't2a_async', 't2a_async_input', 'video_generation'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

/** Largest upload (the documented voice limit; the emulator applies it to text inputs too). */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
/** Validity of a `download_url` for an uploaded file. */
export const FILE_URL_TTL_MS = 24 * 3600 * 1000;
/** Life of an async output from the moment its task succeeded. */
export const ASYNC_OUTPUT_TTL_MS = 9 * 3600 * 1000;

export type FileFormat = 'mp3' | 'm4a' | 'wav' | 'txt' | 'zip' | 'tar';

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
  /** … until this one, when the file is gone. */
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

/** Drops async outputs whose 9 h are over, with their bytes. */
function sweep(emu: Emulator): void {
  const area = filesArea(emu);
  const now = emu.clock.now();
  for (const [id, f] of area.byId) {
    if (f.expires_at_ms !== undefined && now >= f.expires_at_ms) {
      area.byId.delete(id);
      void emu.blobs.removeTree(f.blob).catch(() => undefined); // synchronous: gone before any answer
      emu.markDirty();
    }
  }
}

export function addFile(emu: Emulator, record: FileRecord): void {
  filesArea(emu).byId.set(record.file_id, record);
  emu.markDirty();
}

/**
 * The account's file of that id, or the error the operation gives (2013 naming the field by default;
 * voice cloning passes 20132). Another account's file is answered exactly like an unknown one.
 */
export function findFile(emu: Emulator, account: Account, fileId: number, opts: { field?: string; code?: number } = {}): FileRecord {
  sweep(emu);
  const f = filesArea(emu).byId.get(fileId);
  if (f && f.account_id === account.id && visible(emu, f)) return f;
  const field = opts.field ?? 'file_id';
  const detail = `${field} ${fileId} is not a file of this account (unknown, deleted, expired or not ready yet)`;
  throw opts.code && opts.code !== 2013 ? new SpeechError(opts.code, `invalid samples or voice_id, ${detail}`) : invalidParams(detail);
}

export function listFiles(emu: Emulator, account: Account, purpose: string): FileRecord[] {
  sweep(emu);
  return [...filesArea(emu).byId.values()]
    .filter((f) => f.account_id === account.id && f.purpose === purpose && visible(emu, f))
    .sort((a, b) => a.created_at - b.created_at || a.file_id - b.file_id);
}

export async function deleteFile(emu: Emulator, account: Account, fileId: number, purpose: string): Promise<void> {
  const f = findFile(emu, account, fileId);
  if (f.purpose !== purpose) throw invalidParams(`purpose ${purpose} does not match the file's purpose ${f.purpose}`);
  filesArea(emu).byId.delete(fileId);
  await emu.blobs.remove(f.blob).catch(() => undefined);
  emu.markDirty();
}

/** The documented FileObject. */
export function fileObject(f: FileRecord) {
  return { file_id: f.file_id, bytes: f.bytes, created_at: f.created_at, filename: f.filename, purpose: f.purpose };
}

export function contentTypeOfFile(f: FileRecord): string {
  return { mp3: 'audio/mpeg', m4a: 'audio/mp4', wav: 'audio/wav', txt: 'text/plain; charset=utf-8', zip: 'application/zip', tar: 'application/x-tar' }[
    f.format
  ];
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

/** Whether bytes read as UTF-8 text (a multi-byte character cut at the end of the head is fine). */
function looksLikeText(head: Buffer, whole: boolean): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(whole ? head : head.subarray(0, Math.max(0, head.length - 3)));
    return true;
  } catch {
    return false;
  }
}

/** The format of an upload by its bytes, or 2013 saying what the purpose accepts. */
export function sniffUpload(purpose: UploadPurpose, head: Buffer, whole: boolean): FileFormat {
  if (purpose === 't2a_async_input') {
    if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5)) return 'zip';
    if (looksLikeText(head, whole)) return 'txt';
    throw invalidParams('file content is neither UTF-8 text nor a zip archive; purpose t2a_async_input accepts txt or zip');
  }
  const format = sniffFormat(head);
  if (format === 'mp3' || format === 'm4a' || format === 'wav') return format;
  throw invalidParams(`file content is ${format ?? 'not recognised audio'}; purpose ${purpose} accepts mp3, m4a or wav`);
}
