/**
 * The HMAC key of download links. In memory it is random per start; with a data dir it lives in
 * `<data dir>/url-secret` so links handed out survive a restart. It is written once, to a temporary name,
 * fsynced and renamed (a power cut leaves the old state or the whole file, never an empty one), and a file
 * too short to be a key stops the start: an empty key would let anyone sign a link to another account's file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

export const URL_SECRET_FILE = 'url-secret';
export const URL_SECRET_BYTES = 32;

export class UrlSecretError extends Error {}

export interface UrlSecret {
  key: Buffer;
  /** True when a data dir that already held a state had no secret: links handed out before no longer verify. */
  replacedMissing: boolean;
}

/** `hadState`: the data dir holds a saved state already (so a missing secret means links were handed out). */
export async function loadUrlSecret(dataDir: string, persistent: boolean, hadState: boolean): Promise<UrlSecret> {
  if (!persistent) return { key: randomBytes(URL_SECRET_BYTES), replacedMissing: false };
  const file = join(dataDir, URL_SECRET_FILE);
  if (existsSync(file)) {
    const key = await readFile(file);
    if (key.length < URL_SECRET_BYTES)
      throw new UrlSecretError(
        `download-link secret ${file} holds ${key.length} bytes, fewer than the ${URL_SECRET_BYTES} a key needs; move it away to make a new one (links handed out before then stop working)`,
      );
    return { key, replacedMissing: false };
  }
  const key = randomBytes(URL_SECRET_BYTES);
  const tmp = `${file}.tmp`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(key);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  const dir = await open(dataDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return { key, replacedMissing: hadState };
}
