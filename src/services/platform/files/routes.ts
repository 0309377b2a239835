/**
 * `POST /v1/files/upload`: multipart `scene` + `file`. The file is streamed to disk and stopped at the
 * scene's limit when `scene` came first (else at the largest limit, then checked against the scene).
 * `?with_url=true` adds a signed download `url` to `data`.
 */
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { BlobTooLargeError } from '../../../core/state/blobs.js';
import type { Emulator } from '../../../core/emulator.js';
import { discardStream } from '../../../core/http/memory.js';
import { ok, PlatformError } from '../envelope.js';
import {
  checkUploadForm,
  checkUploadWindow,
  commitUpload,
  discardBlob,
  incomingBlob,
  isScene,
  MAX_UPLOAD_BYTES,
  SCENE_LIMITS,
  tooLarge,
  tooLargeForAnyScene,
  unreadableForm,
  uploadArea,
  type Scene,
} from './model.js';
import { uploadQuery } from './schema.js';

const config = { family: 'upload', capability: 'upload' } as const;

interface Received {
  tmpBlob: string;
  fileName: string;
  size: number;
  /** The scene the size was limited by while streaming (undefined: the largest limit). */
  limitedBy?: Scene;
}

export async function fileRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  uploadArea(emu);

  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post('/v1/files/upload', { config, schema: { querystring: uploadQuery } }, async (req) => {
    const account = req.ctx.account!;
    if (!req.isMultipart()) throw new PlatformError('param', 'request must be multipart/form-data with the fields scene and file');

    let scene: string | undefined;
    let received: Received | undefined;
    let problem: PlatformError | undefined;
    let fileAsField = false;
    const keep = (p: PlatformError) => (problem ??= p);

    const receive = async (part: MultipartFile): Promise<void> => {
      if (part.fieldname !== 'file' || received || problem) return void (await pipeline(part.file, discardStream()));
      const known = scene !== undefined && isScene(scene) ? scene : undefined;
      if (scene !== undefined && !known) {
        keep(new PlatformError('param', `scene: unsupported scene "${scene}"; use image, audio or video`));
        return void (await pipeline(part.file, discardStream()));
      }
      try {
        checkUploadWindow(emu, account); // before storing anything: a refused upload is not written
      } catch (err) {
        keep(err as PlatformError);
        return void (await pipeline(part.file, discardStream()));
      }
      const tmpBlob = incomingBlob(emu, account);
      try {
        const size = await emu.blobs.putStream(tmpBlob, part.file, known ? SCENE_LIMITS[known] : MAX_UPLOAD_BYTES);
        received = { tmpBlob, fileName: part.filename, size, limitedBy: known };
      } catch (err) {
        if (err instanceof BlobTooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          keep(known ? tooLarge(known) : tooLargeForAnyScene());
        } else throw err;
      }
    };

    try {
      for await (const part of req.parts()) {
        if (part.type === 'file') await receive(part);
        else if (part.fieldname === 'scene') scene = String(part.value ?? '');
        else if (part.fieldname === 'file') fileAsField = true;
      }
    } catch (err) {
      await discardBlob(emu, received?.tmpBlob);
      throw unreadableForm(err);
    }

    try {
      const { scene: checked, file } = checkUploadForm({ scene, file: received, fileAsField, problem });
      const data = await commitUpload(emu, account, {
        tmpBlob: file.tmpBlob,
        scene: checked,
        fileName: file.fileName,
        size: file.size,
        withUrl: req.query.with_url,
      });
      return ok(data, 'success');
    } catch (err) {
      await discardBlob(emu, received?.tmpBlob);
      throw err;
    }
  });
}
