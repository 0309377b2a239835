// The download-link secret of a data dir is the subject: each test starts its own emulator on its own dir.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { runEmulator } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { loggerOptions } from '../../src/logger.js';
import { call, startTestEmulator } from '../helpers/emulator.js';

/** The HMAC key of download links in a data dir: made durably once, refused when too short, replaced loudly. */
const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'emulator-secret-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function urlLink(speechUrl: string): Promise<string> {
  const r = await call(`${speechUrl}/v1/t2a_v2`, {
    headers: { authorization: 'Bearer secret-key' },
    json: { model: 'speech-02-hd', text: 'A link.', voice_setting: { voice_id: 'male-qn-qingse' }, output_format: 'url' },
  });
  expect(r.body.base_resp.status_code).toBe(0);
  return r.body.data.audio as string;
}
const moved = (url: string, base: string) => base + new URL(url).pathname + new URL(url).search;

describe('download-link secret of a data dir', () => {
  it('is made at first start as 32 bytes, mode 0600, with no temporary file left, and kept across restarts', async () => {
    const dir = freshDir();
    const first = await startTestEmulator({ dataDir: dir });
    const link = await urlLink(first.speechUrl);
    await first.close();
    const file = join(dir, 'url-secret');
    expect(readFileSync(file).length).toBe(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    const second = await startTestEmulator({ dataDir: dir });
    try {
      expect((await fetch(moved(link, second.speechUrl))).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  for (const [what, bytes] of [
    ['empty', Buffer.alloc(0)],
    ['short', Buffer.from('0123456789')],
  ] as const) {
    it(`an ${what} secret file stops the start naming the file, and is left as it was`, async () => {
      const dir = freshDir();
      writeFileSync(join(dir, 'url-secret'), bytes);
      await expect(startTestEmulator({ dataDir: dir })).rejects.toThrow(
        `download-link secret ${join(dir, 'url-secret')} holds ${bytes.length} bytes, fewer than the 32 a key needs`,
      );
      expect(readFileSync(join(dir, 'url-secret'))).toEqual(bytes);
    });
  }

  it('a missing secret beside a saved state is replaced with a warning: links handed out before stop verifying', async () => {
    const dir = freshDir();
    const first = await startTestEmulator({ dataDir: dir });
    const link = await urlLink(first.speechUrl);
    await first.close();
    rmSync(join(dir, 'url-secret'));
    const lines: string[] = [];
    const logger = pino(loggerOptions('warn'), { write: (line: string) => void lines.push(line) });
    const second = await runEmulator(configSchema.parse({ speechPort: 0, speechBackupPort: 0, platformPort: 0, seed: 't', dataDir: dir }), logger);
    try {
      expect(lines.join('')).toContain('url-secret was missing: a new download-link secret is made, and links handed out before no longer verify');
      expect(readFileSync(join(dir, 'url-secret')).length).toBe(32);
      expect((await fetch(moved(link, second.speechUrl))).status).not.toBe(200);
    } finally {
      await second.close();
    }
  });
});
