/**
 * Requests a listener serves without recording them (no journal entry, no metrics, no log line), so
 * that looking at the emulator does not change what it shows: the inspector's own fetches of stored
 * files, marked by the page with `X-Emulator-Inspector: 1`, and a browser's `GET /` that is sent on
 * to the inspector. Control-plane calls (`/_emulator/…`) are never recorded either (core/http/lifecycle.ts).
 */
import type { FastifyRequest } from 'fastify';
import { DOWNLOAD_PREFIX } from '../state/blobs.js';

/** The header the inspector page sends with every file it fetches for its players. */
export const INSPECTOR_HEADER = 'x-emulator-inspector';

export function unrecorded(req: FastifyRequest, path: string): boolean {
  if (path === '/') return req.method === 'GET' && String(req.headers.accept ?? '').includes('text/html');
  return path.startsWith(DOWNLOAD_PREFIX) && req.headers[INSPECTOR_HEADER] === '1';
}
