import { pipeline } from 'node:stream/promises';
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { BlobTooLargeError } from '../../../core/state/blobs.js';
import type { Emulator } from '../../../core/emulator.js';
import { discardStream } from '../../../core/http/memory.js';
import { StorageError } from '../../../core/state/storage.js';
import { invalidParams, SpeechError } from '../errors.js';
import { parseWith, sendOk, signedLink, speechOperations } from '../reply.js';
import {
  addFile,
  ASYNC_OUTPUT_TTL_MS,
  blobOf,
  contentTypeOfFile,
  deleteFile,
  FILE_URL_TTL_MS,
  fileObject,
  filesArea,
  headOf,
  listFiles,
  newFileId,
  ownFile,
  type FileRecord,
} from './model.js';
import {
  checkUpload,
  DELETE_PURPOSES,
  LIST_PURPOSES,
  MAX_ANY_UPLOAD_BYTES,
  oversizeRefusal,
  retentionOf,
  UPLOAD_PURPOSES,
  uploadRefusal,
  type UploadPurpose,
} from './purposes.js';
import { deleteBody, fileIdQuery, listQuery } from './schema.js';
import { describeValue } from '../../../core/http/describe.js';
import { attachment } from '../../../core/http/content-disposition.js';

function oneOf(field: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) throw invalidParams(`${field} ${describeValue(value)} is not supported; use one of ${allowed.join(', ')}`);
}

/** `/v1/files/upload | list | retrieve | retrieve_content | delete` of the speech service. */
export async function speechFileRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  filesArea(emu);
  speechOperations(app, emu, 'tts');
  // One file per upload, streamed to disk and cut at the limit (never held in memory whole).
  // The purpose may come after the file (the official CLI sends the file first): the largest limit of
  // any purpose applies while reading, the purpose's own once both are known.
  await app.register(multipart, { limits: { fileSize: MAX_ANY_UPLOAD_BYTES + 1, files: 1, fields: 8, parts: 16 } });
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/files/upload', async (req, reply) => {
    const account = req.ctx.account!;
    if (!req.isMultipart()) throw invalidParams('request must be multipart/form-data with the parts purpose and file');
    let purpose: string | undefined;
    let tmp: string | undefined;
    let size = 0;
    let filename = '';
    let tooLarge = false;
    const receive = async (part: MultipartFile) => {
      if (part.fieldname !== 'file' || tmp || tooLarge) return void (await pipeline(part.file, discardStream()));
      tmp = `speech-files/${account.id}/incoming-${emu.ids.stream(`${account.id}:files`).hex(16)}`;
      filename = part.filename || 'file';
      try {
        size = await emu.blobs.putStream(tmp, part.file, MAX_ANY_UPLOAD_BYTES);
      } catch (err) {
        tmp = undefined;
        if (err instanceof BlobTooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') tooLarge = true;
        else throw err;
      }
    };
    const drop = () => (tmp ? emu.blobs.remove(tmp).catch(() => undefined) : undefined);
    try {
      for await (const part of req.parts()) {
        if (part.type === 'file') await receive(part);
        else if (part.fieldname === 'purpose') purpose = String(part.value ?? '');
      }
    } catch (err) {
      await drop();
      if (err instanceof SpeechError || err instanceof StorageError) throw err;
      // A body that ends early or breaks the multipart framing is answered, never left hanging.
      throw invalidParams(`multipart body could not be read (${(err as Error).message})`);
    }
    try {
      if (purpose === undefined || purpose === '') throw invalidParams(`purpose is required; use one of ${UPLOAD_PURPOSES.join(', ')}`);
      oneOf('purpose', purpose, UPLOAD_PURPOSES);
      if (tooLarge) throw oversizeRefusal(purpose as UploadPurpose);
      if (!tmp) throw invalidParams('file is required (a file part named file)');
      if (size === 0) throw uploadRefusal(purpose, 'file is empty');
      const format = checkUpload(purpose as UploadPurpose, await headOf(emu, tmp), size, size <= 65536);
      const fileId = newFileId(emu, account);
      const blob = blobOf(account, fileId, format);
      await emu.blobs.move(tmp, blob);
      const record: FileRecord = { file_id: fileId, account_id: account.id, bytes: size, created_at: emu.clock.nowSec(), filename, purpose, format, blob };
      const keep = retentionOf(purpose as UploadPurpose);
      if (keep !== undefined) record.expires_at_ms = emu.clock.now() + keep;
      addFile(emu, record);
      return sendOk(emu, req, reply, { file: fileObject(record) });
    } catch (err) {
      await drop();
      throw err;
    }
  });

  r.get('/v1/files/list', { schema: { querystring: listQuery } }, async (req, reply) => {
    const { purpose } = parseWith(listQuery, req.query, 'query');
    if (purpose !== undefined) oneOf('purpose', purpose, LIST_PURPOSES);
    return sendOk(emu, req, reply, { files: listFiles(emu, req.ctx.account!, purpose).map(fileObject) });
  });

  r.get('/v1/files/retrieve', { schema: { querystring: fileIdQuery } }, async (req, reply) => {
    const f = ownFile(emu, req.ctx.account!, parseWith(fileIdQuery, req.query, 'query').file_id);
    // A link never outlives its file (async outputs: 9 h after success; video uploads: 7 days).
    const expires =
      f.ready_at_ms !== undefined ? f.ready_at_ms + ASYNC_OUTPUT_TTL_MS : Math.min(emu.clock.now() + FILE_URL_TTL_MS, f.expires_at_ms ?? Infinity);
    return sendOk(emu, req, reply, { file: { ...fileObject(f), download_url: signedLink(emu, req, f.blob, expires) } });
  });

  r.get('/v1/files/retrieve_content', { schema: { querystring: fileIdQuery } }, async (req, reply) => {
    const f = ownFile(emu, req.ctx.account!, parseWith(fileIdQuery, req.query, 'query').file_id);
    const size = await emu.blobs.size(f.blob);
    // The record is there but the data dir lost its bytes: the internal error naming the missing file.
    if (size === null) throw emu.blobs.missing(f.blob);
    return reply
      .code(200)
      .header('content-type', contentTypeOfFile(f))
      .header('content-length', size)
      .header('content-disposition', attachment(f.filename))
      .send(emu.blobs.readStream(f.blob));
  });

  r.post('/v1/files/delete', { schema: { body: deleteBody } }, async (req, reply) => {
    const body = await deleteFields(req);
    const { file_id, purpose } = parseWith(deleteBody, body);
    if (purpose !== undefined) oneOf('purpose', purpose, DELETE_PURPOSES);
    // The answer's id is always a JSON integer, whatever form the request used.
    const f = await deleteFile(emu, req.ctx.account!, file_id, purpose);
    return sendOk(emu, req, reply, { file_id: f.file_id });
  });
}

/** The page declares multipart/form-data but shows a JSON body: both are read. */
async function deleteFields(req: FastifyRequest): Promise<unknown> {
  if (!req.isMultipart()) return req.body;
  const fields: Record<string, string> = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') await pipeline(part.file, discardStream());
      else fields[part.fieldname] = String(part.value ?? '');
    }
  } catch (err) {
    throw invalidParams(`multipart body could not be read (${(err as Error).message})`);
  }
  return fields;
}
