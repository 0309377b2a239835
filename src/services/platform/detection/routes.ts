import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { ok, PlatformError } from '../envelope.js';
import { checkUpload, detect, fetchDetectionUrl, type Upload } from './model.js';
import { DETECTION_MAX_BYTES, detectUrlRequest } from './schema.js';

const PATH = '/v1/audio/ai-detect';

/** Raw HTTP answers the spec gives without the envelope (413 oversize, 405 wrong method). */
function bare(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(text);
}

/** Reads the multipart parts: keeps field `audio` up to the limit, drains everything else. */
async function readUpload(req: FastifyRequest): Promise<Upload> {
  let found: Upload = { kind: 'none' };
  let wrongField: string | null = null;
  for await (const part of req.parts({ limits: { files: 4, fileSize: DETECTION_MAX_BYTES + 1 } })) {
    if (part.type !== 'file') continue;
    const file = part as MultipartFile;
    if (file.fieldname !== 'audio' || found.kind !== 'none') {
      if (file.fieldname !== 'audio') wrongField ??= file.fieldname;
      // Drain without waiting for the part's end: a body cut before its closing boundary never ends
      // the part, and the parser reports that through the iterator, which must be free to ask.
      file.file.resume();
      continue;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    for await (const chunk of file.file as AsyncIterable<Buffer>) {
      if (tooLarge) continue; // drain so the client reads our answer; keep nothing
      size += chunk.length;
      if (size > DETECTION_MAX_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        continue;
      }
      chunks.push(chunk);
    }
    found =
      tooLarge || file.file.truncated ? { kind: 'too-large' } : { kind: 'file', bytes: Buffer.concat(chunks), name: file.filename, contentType: file.mimetype };
  }
  return found.kind === 'none' && wrongField !== null ? { kind: 'wrong-field', field: wrongField } : found;
}

/** `POST /v1/audio/ai-detect`: JSON `{audio_url}` or multipart field `audio`; envelope with HTTP 200. */
export async function detectionRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(PATH, { config: { family: 'detection', capability: 'detection' }, schema: { body: detectUrlRequest } }, async (req, reply) => {
    const account = req.ctx.account!;
    if (req.isMultipart()) {
      let upload: Upload;
      try {
        upload = await readUpload(req);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'FST_REQ_FILE_TOO_LARGE') return bare(reply, 413, 'Request Entity Too Large');
        throw new PlatformError('param', `multipart body could not be read (${(err as Error).message})`);
      }
      if (upload.kind === 'too-large') return bare(reply, 413, 'Request Entity Too Large');
      const file = checkUpload(upload);
      return ok(await detect(emu, account, 'audio', file.bytes, file.name, file.contentType));
    }
    const got = await fetchDetectionUrl(emu, req.body.audio_url);
    return ok(await detect(emu, account, 'audio_url', got.bytes, got.name, got.contentType));
  });

  // A wrong method answers 405 without the envelope (spec, detection detail 8).
  app.route({
    method: ['GET', 'PUT', 'DELETE', 'PATCH'],
    url: PATH,
    // Answered before the body is parsed: a body no parser takes is still a wrong method.
    onRequest: async (_req, reply) => bare(reply.header('allow', 'POST'), 405, 'Method Not Allowed'),
    handler: async (_req, reply) => bare(reply.header('allow', 'POST'), 405, 'Method Not Allowed'),
  });
}
