import { call } from '../helpers/emulator.js';

/** Helpers of the platform synthesis, voice and upload tests. */

/** `call` on one platform listener with a key in `x-api-key` (none when the key is empty). */
export function api(base: string, key: string) {
  return (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'x-api-key': key, ...init.headers };
    if (!key) delete headers['x-api-key'];
    return call(base + path, { ...init, headers });
  };
}

/** Uploads bytes with multipart (scene first unless told), answering the parsed envelope. */
export async function upload(
  base: string,
  key: string,
  bytes: Buffer | null,
  opts: { scene?: string | null; name?: string; sceneLast?: boolean; query?: string } = {},
) {
  const form = new FormData();
  const scene = opts.scene === undefined ? 'audio' : opts.scene;
  if (scene !== null && !opts.sceneLast) form.append('scene', scene);
  if (bytes) form.append('file', new Blob([bytes]), opts.name ?? 'ref.wav');
  if (scene !== null && opts.sceneLast) form.append('scene', scene);
  const res = await fetch(`${base}/v1/files/upload${opts.query ?? ''}`, { method: 'POST', headers: key ? { 'x-api-key': key } : {}, body: form });
  return { status: res.status, body: (await res.json()) as any };
}
