import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { BlobTooLargeError } from '../../../core/blobs.js';
import type { Emulator } from '../../../core/emulator.js';
import { ok, PlatformError } from '../envelope.js';
import { checkScene, checkUploadWindow, commitUpload, discardBlob, incomingBlob, isScene, MAX_UPLOAD_BYTES, SCENE_LIMITS, tooLarge, uploadArea, type Scene } from './model.js';

/**
 * `POST /v1/files/upload`: multipart `scene` + `file`. The file is streamed to disk and stopped at the
 * scene's limit when `scene` came first (else at the largest limit, then checked against the scene).
 * `?with_url=true` adds a signed download `url` to `data`.
 */
const config = { family: 'upload', capability: 'upload' } as const;

const discard = () => new Writable({ write: (_chunk, _enc, done) => done() });

interface Received {
  tmpBlob: string;
  fileName: string;
  size: number;
  /** The scene the size was limited by while streaming (undefined: the largest limit). */
  limitedBy?: Scene;
}

export async function fileRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  uploadArea(emu);

  app.post('/v1/files/upload', { config }, async (req) => {
    const account = req.emu.account!;
    if (!req.isMultipart()) throw new PlatformError('param', 'request must be multipart/form-data with the fields scene and file');
    const withUrl = ['true', '1'].includes(String((req.query as Record<string, unknown>).with_url ?? '').toLowerCase());

    let scene: string | undefined;
    let received: Received | undefined;
    let problem: PlatformError | undefined;
    let fileAsField = false;
    const keep = (p: PlatformError) => (problem ??= p);

    const receive = async (part: MultipartFile): Promise<void> => {
      if (part.fieldname !== 'file' || received || problem) return void (await pipeline(part.file, discard()));
      const known = scene !== undefined && isScene(scene) ? scene : undefined;
      if (scene !== undefined && !known) {
        keep(new PlatformError('param', `scene: unsupported scene "${scene}"; use image, audio or video`));
        return void (await pipeline(part.file, discard()));
      }
      try {
        checkUploadWindow(emu, account); // before storing anything: a refused upload is not written
      } catch (err) {
        keep(err as PlatformError);
        return void (await pipeline(part.file, discard()));
      }
      const tmpBlob = incomingBlob(emu, account);
      try {
        const size = await emu.blobs.putStream(tmpBlob, part.file, known ? SCENE_LIMITS[known] : MAX_UPLOAD_BYTES);
        received = { tmpBlob, fileName: part.filename, size, limitedBy: known };
      } catch (err) {
        if (err instanceof BlobTooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          keep(known ? tooLarge(known) : new PlatformError(20010, `file: larger than ${MAX_UPLOAD_BYTES / 1_000_000} MB, the largest limit of any scene`));
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
      if (err instanceof PlatformError) throw err;
      if ((err as { code?: string }).code === 'FST_FILES_LIMIT') throw new PlatformError('param', 'file: only one file may be sent per upload');
      throw new PlatformError('param', `multipart body could not be read: ${(err as Error).message}`);
    }

    try {
      // Order of checks (design.md): a parameter error of the form answers before the upload window.
      if (problem && problem.codeOrKind !== 'rate') throw problem;
      const sceneOk = checkScene(scene);
      if (problem) throw problem;
      if (!received) throw new PlatformError('param', fileAsField ? 'file: must be sent as a file part (with a filename), not a text field' : 'file: is required');
      if (received.size > SCENE_LIMITS[sceneOk]) throw tooLarge(sceneOk);
      if (received.size === 0) throw new PlatformError('param', 'file: is empty');
      const data = await commitUpload(emu, account, { tmpBlob: received.tmpBlob, scene: sceneOk, fileName: received.fileName, size: received.size, withUrl });
      return ok(data, 'success');
    } catch (err) {
      await discardBlob(emu, received?.tmpBlob);
      throw err;
    }
  });
}
