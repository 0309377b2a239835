import type { FastifyInstance, FastifyReply } from 'fastify';
import { contentTypeOf, DOWNLOAD_PREFIX, type BlobStore } from '../state/blobs.js';

/**
 * `GET /download/<path>?expires=&sig=` on every listener: a plain GET with no credentials, as real
 * clients fetch the links they were handed. A tampered, expired or unsafe link serves nothing.
 */
export function registerDownloads(
  app: FastifyInstance,
  emu: { readonly blobs: BlobStore },
  fail: (reply: FastifyReply, status: number, message: string) => FastifyReply,
): void {
  app.get(`${DOWNLOAD_PREFIX}*`, async (req, reply) => {
    const raw = (req.raw.url ?? '').split('?')[0]!;
    // Our links only hold plain characters: anything encoded (%2F, %2e…) is someone probing the store.
    if (raw.includes('%') || raw.includes('\\')) return fail(reply, 403, 'download path is not a plain file path');
    const rel = (req.params as { '*': string })['*'];
    const { expires, sig } = req.query as { expires?: string; sig?: string };
    const check = emu.blobs.verify(rel, expires, sig);
    if (check === 'expired') return fail(reply, 403, 'download link expired');
    if (check !== 'ok') return fail(reply, 403, 'download link signature is invalid');
    const size = await emu.blobs.size(rel);
    if (size === null) return fail(reply, 404, 'file no longer exists');
    return reply
      .header('content-type', contentTypeOf(rel))
      .header('content-length', size)
      .header('cache-control', 'private, max-age=0')
      .send(emu.blobs.readStream(rel));
  });
}
