/**
 * Upload rules: scenes and their size limits, the hourly window, object keys, and the record of what
 * each account uploaded (state view, reset). The bytes themselves are blobs named by the object key.
 */
import { rm } from 'node:fs/promises';
import type { Account } from '../../../core/state/accounts.js';
import * as z from 'zod';
import { accountArea, areaOf, type AccountArea } from '../../../core/state/areas.js';
import type { Emulator } from '../../../core/emulator.js';
import { StorageError } from '../../../core/state/storage.js';
import { uploadKeyPrefix } from '../../shared/remote.js';
import { PlatformError } from '../envelope.js';

/** The spec writes MB: decimal megabytes (10 MB = 10,000,000 bytes), as the spec's unit says. */
const MB = 1_000_000;
export const SCENE_LIMITS = { image: 10 * MB, audio: 50 * MB, video: 200 * MB } as const;
export type Scene = keyof typeof SCENE_LIMITS;
export const MAX_UPLOAD_BYTES = Math.max(...Object.values(SCENE_LIMITS));
export const UPLOADS_PER_HOUR = 30;
const HOUR_MS = 3600 * 1000;
/** Validity of the optional `url` (`?with_url=true`), on the emulator clock. */
export const UPLOAD_URL_TTL_MS = 24 * HOUR_MS;

export interface UploadRecord {
  object_key: string;
  file_name: string;
  size: number;
  scene: Scene;
  uploaded_at_ms: number;
}

export interface UploadData {
  object_key: string;
  file_name: string;
  size: number;
  scene: Scene;
  url?: string;
}

const AREA = 'platform-uploads';

type UploadArea = AccountArea<UploadRecord[]>;

/** The uploads area of an emulator, registered on first use. */
export function uploadArea(emu: Emulator): UploadArea {
  return areaOf(emu, AREA, () => createArea(emu));
}

function createArea(emu: Emulator): UploadArea {
  const drop = (rel: string) => void emu.blobs.removeTree(rel).catch(() => undefined);
  return accountArea<UploadRecord[]>({
    name: AREA,
    savedByAccount: {
      value: z.array(z.looseObject({ object_key: z.string().min(1), file_name: z.string(), size: z.number(), scene: z.string(), uploaded_at_ms: z.number() })),
      blobs: (list) => list.map((u) => u.object_key),
    },
    show: (list) => list ?? [],
    // Every file of the account goes, the ones still arriving included.
    dropFiles(accountId) {
      if (accountId === undefined) {
        drop('uploads');
        drop('incoming');
        return;
      }
      for (const scene of Object.keys(SCENE_LIMITS)) drop(`uploads/${scene}/${accountId}`);
      drop(`incoming/${accountId}`);
    },
  });
}

export function isScene(value: string): value is Scene {
  return Object.hasOwn(SCENE_LIMITS, value);
}

export function checkScene(scene: string | undefined): Scene {
  if (scene === undefined || scene === '') throw new PlatformError('param', 'scene: is required (image, audio or video)');
  if (!isScene(scene)) throw new PlatformError('param', `scene: unsupported scene "${scene}"; use image, audio or video`);
  return scene;
}

/** 10005 when the account already made 30 uploads in the last hour (sliding window on the emulator clock). */
export function checkUploadWindow(emu: Emulator, account: Account): void {
  const w = emu.limits.check(emu.windowKey(account, 'upload'), HOUR_MS, UPLOADS_PER_HOUR);
  if (!w.allowed) {
    throw new PlatformError(
      'rate',
      `upload frequency limit exceeded: at most ${UPLOADS_PER_HOUR} uploads per hour; retry in ${Math.ceil(w.retryAfterMs / 1000)} s`,
    );
  }
}

/** 20010: the file is over its scene's limit. */
export function tooLarge(scene: Scene): PlatformError {
  return new PlatformError(20010, `file: larger than the ${SCENE_LIMITS[scene] / MB} MB limit of scene ${scene}`);
}

/** 20010: the file is over the largest limit of any scene (its scene was not known while it streamed). */
export function tooLargeForAnyScene(): PlatformError {
  return new PlatformError(20010, `file: larger than ${MAX_UPLOAD_BYTES / MB} MB, the largest limit of any scene`);
}

/** What the multipart form brought, as the route read it. */
export interface UploadForm<F extends { size: number }> {
  scene?: string;
  /** The first file part named `file`, as stored. */
  file?: F;
  /** A text field named `file` came instead of a file part. */
  fileAsField: boolean;
  /** The first problem met while streaming (unknown scene, window, size). */
  problem?: PlatformError;
}

/**
 * The checks of a received form, in order (docs/platform-http.md, Uploads: a parameter error of the form answers before
 * the upload window): a streaming problem other than the window; scene (10001); the window (10005);
 * file present (10001); its scene's size limit (20010); not empty (10001). Answers scene and file.
 */
export function checkUploadForm<F extends { size: number }>(form: UploadForm<F>): { scene: Scene; file: F } {
  if (form.problem && form.problem.codeOrKind !== 'rate') throw form.problem;
  const scene = checkScene(form.scene);
  if (form.problem) throw form.problem;
  if (!form.file)
    throw new PlatformError('param', form.fileAsField ? 'file: must be sent as a file part (with a filename), not a text field' : 'file: is required');
  if (form.file.size > SCENE_LIMITS[scene]) throw tooLarge(scene);
  if (form.file.size === 0) throw new PlatformError('param', 'file: is empty');
  return { scene, file: form.file };
}

/** The multipart errors of the form itself: more than one file (10001), or a body that cannot be read. */
export function unreadableForm(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  // A disk that refuses the file is no fault of the body: the internal error, saying what is full.
  if (err instanceof StorageError) return new PlatformError('internal', err.message);
  if ((err as { code?: string }).code === 'FST_FILES_LIMIT') return new PlatformError('param', 'file: only one file may be sent per upload');
  return new PlatformError('param', `multipart body could not be read: ${(err as Error).message}`);
}

/** The file name as it may appear in an object key: plain characters only, at most 100. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[._-]+/, '')
    .slice(-100);
  return safe || 'file';
}

/** Where a file is written while its scene is not yet known. */
export function incomingBlob(emu: Emulator, account: Account): string {
  return `incoming/${account.id}/${emu.ids.stream(account.id).hex(16)}`;
}

/** Moves a received file to its object key, counts it in the window and records it. */
export async function commitUpload(
  emu: Emulator,
  account: Account,
  input: { tmpBlob: string; scene: Scene; fileName: string; size: number; withUrl: boolean },
): Promise<UploadData> {
  // Counted here, and checked again: a parallel upload of the account may have filled the window.
  if (!emu.limits.hit(emu.windowKey(account, 'upload'), HOUR_MS, UPLOADS_PER_HOUR).allowed) checkUploadWindow(emu, account);
  const id = emu.ids.stream(account.id).hex(16);
  const objectKey = `${uploadKeyPrefix(account, input.scene)}${id}-${safeFileName(input.fileName)}`;
  await emu.blobs.move(input.tmpBlob, objectKey);
  const record: UploadRecord = { object_key: objectKey, file_name: input.fileName, size: input.size, scene: input.scene, uploaded_at_ms: emu.clock.now() };
  const area = uploadArea(emu);
  area.byAccount.set(account.id, [...(area.byAccount.get(account.id) ?? []), record]);
  emu.markDirty(AREA, account.id);
  return {
    object_key: objectKey,
    file_name: input.fileName,
    size: input.size,
    scene: input.scene,
    ...(input.withUrl ? { url: emu.downloadUrl('platform', objectKey, emu.clock.now() + UPLOAD_URL_TTL_MS) } : {}),
  };
}

export async function discardBlob(emu: Emulator, rel: string | undefined): Promise<void> {
  if (rel) await rm(emu.blobs.file(rel), { force: true }).catch(() => undefined);
}
