// Start, restart and close are the subject here: each test starts its own emulator, except the control token's.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { FixtureError } from '../../src/core/state/fixtures.js';
import { call, control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

const temp: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temp.push(d);
  return d;
};
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

describe('broken fixtures stop the start', () => {
  it('names the file and the field', async () => {
    const dir = tempDir('fixtures-bad-');
    writeFileSync(join(dir, 'accounts.json'), JSON.stringify([{ key: 'ok-key' }, { key: 'k2', balance_micro: -5 }]));
    const err = await startTestEmulator({ fixturesDir: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FixtureError);
    expect((err as Error).message).toContain(join(dir, 'accounts.json'));
    expect((err as Error).message).toContain('1.balance_micro');
  });

  it('names a file that is not JSON, and a folder that does not exist', async () => {
    const dir = tempDir('fixtures-bad-');
    writeFileSync(join(dir, 'roles.json'), '[{"id": ');
    const err = (await startTestEmulator({ fixturesDir: dir }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(FixtureError);
    expect(err.message).toContain(join(dir, 'roles.json'));
    const missing = (await startTestEmulator({ fixturesDir: join(dir, 'nope') }).catch((e: unknown) => e)) as Error;
    expect(missing).toBeInstanceOf(FixtureError);
    expect(missing.message).toContain('nope');
  });
});

describe('persistence', () => {
  it('with a data dir, blobs, account settings and signed links survive a restart', async () => {
    const dataDir = tempDir('data-');
    const key = 'persist-key-0001';
    const first = await startTestEmulator({ dataDir });
    const rel = 'audio/persist/clip.mp3';
    const bytes = Buffer.from('persisted audio bytes');
    await first.emulator.blobs.put(rel, bytes);
    const path = first.emulator.blobs.signedPath(rel, first.emulator.clock.now() + 3_600_000);
    expect((await control(first.platformUrl).putAccount(key, { project: 'kept', balance_micro: 77, capabilities: ['tts'] })).status).toBe(200);
    first.emulator.registerArea({ name: 'probe_area', reset: () => {}, save: () => ({ voices: ['v1'] }) });
    await first.close();
    expect(existsSync(join(dataDir, 'state.db'))).toBe(true);
    const db = new DatabaseSync(join(dataDir, 'state.db'), { readOnly: true });
    const rows = db.prepare('SELECT data FROM parts UNION ALL SELECT data FROM records').all() as { data: string }[];
    const probe = db.prepare("SELECT data FROM records WHERE area = 'probe_area'").get() as { data: string };
    db.close();
    expect(rows.map((r) => r.data).join('\n')).not.toContain(key);
    expect(JSON.parse(probe.data)).toEqual({ voices: ['v1'] });

    const second = await startTestEmulator({ dataDir });
    try {
      expect((await control(second.speechUrl).account(key)).body).toMatchObject({ project: 'kept', balance_micro: 77, capabilities: ['tts'] });
      const res = await fetch(second.platformUrl + path);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
      expect(await second.emulator.blobs.read(rel)).toEqual(bytes);
      // an area registered at set-up receives its saved data
      let loaded: unknown = null;
      second.emulator.registerArea({ name: 'probe_area', reset: () => {}, load: (d) => (loaded = d) });
      await second.emulator.loadSnapshot();
      expect(loaded).toEqual({ voices: ['v1'] });
    } finally {
      await second.close();
    }
    expect(existsSync(join(dataDir, 'blobs'))).toBe(true); // a data dir is never removed
  });

  it('a snapshot that cannot be read stops the start naming the file, and is left as it was', async () => {
    const dataDir = tempDir('data-broken-');
    writeFileSync(join(dataDir, 'state.json'), '{"accounts": [');
    const err = (await startTestEmulator({ dataDir }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(join(dataDir, 'state.json'));
    expect(readFileSync(join(dataDir, 'state.json'), 'utf8')).toBe('{"accounts": [');
  });

  it('without a data dir, the temporary folder is removed at close and links die with it', async () => {
    const emu = await startTestEmulator();
    const dir = emu.emulator.dataDir;
    await emu.emulator.blobs.put('a/b.wav', 'x');
    expect(existsSync(dir)).toBe(true);
    expect(emu.emulator.persistent).toBe(false);
    await emu.close();
    expect(existsSync(dir)).toBe(false);
  });
});

describe('control token and public URL', () => {
  const { emu } = emulatorForFile({ start: { controlToken: 'ctl-token', publicUrl: 'https://emu.example.test:9443/' } });
  it('when set, every control route needs Authorization: Bearer <token>; services do not', async () => {
    // EMULATOR_PUBLIC_URL is the base of the links handed out, whatever listener issued them
    const link = emu.emulator.downloadUrl('platform', 'a/b.mp3', 1_000);
    expect(link).toMatch(/^https:\/\/emu\.example\.test:9443\/download\/a\/b\.mp3\?expires=1000&sig=/);
    expect(emu.emulator.downloadUrl('speech', 'a/b.mp3', 1_000)).toBe(link);
    for (const url of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      for (const [method, path] of [
        ['GET', '/clock'],
        ['GET', '/state'],
        ['GET', '/metrics'],
        ['POST', '/reset'],
        ['GET', '/journal'],
        ['GET', '/faults'],
      ]) {
        const none = await call(`${url}/_emulator${path}`, { method });
        expect(none.status, `${method} ${path}`).toBe(401);
        expect(none.body.error.message).toMatch(/Bearer/);
        expect((await control(url, 'wrong').call(method!, path!)).status).toBe(401);
        expect((await control(url, 'ctl-token').call(method!, path!)).status).toBe(200);
      }
    }
    expect((await call(`${emu.platformUrl}/v1/anything`)).status).toBe(404);
  });
});

describe('graceful close', () => {
  it('an in-flight request finishes, then the listeners are gone', async () => {
    const emu = await startTestEmulator();
    const t0 = performance.now();
    const inFlight = call(`${emu.speechUrl}/v1/slow`, { headers: { 'x-emulator-fault': 'delay_ms=300' } });
    const inFlightBackup = call(`${emu.speechBackupUrl}/v1/slow`, { headers: { 'x-emulator-fault': 'delay_ms=300' } });
    while (emu.emulator.journal.size() < 2) await new Promise((r) => setTimeout(r, 5)); // both reached the pipeline
    await emu.close();
    const closedAfter = performance.now() - t0;
    const [r, rb] = await Promise.all([inFlight, inFlightBackup]);
    expect(closedAfter).toBeGreaterThanOrEqual(290);
    // close() does not wait for the client to drop its keep-alive connection
    expect(closedAfter).toBeLessThan(3_000); // a client keeps an idle socket 4 s
    expect(r.headers.get('connection')).toBe('close');
    expect(r.status).toBe(404);
    expect(r.body.base_resp).toBeDefined();
    expect(rb.status).toBe(404);
    for (const url of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      await expect(fetch(`${url}/_emulator/health`)).rejects.toThrow();
    }
    await emu.close(); // twice is harmless
  });

  it('a long delay_ms of a request whose client left holds no timer after close', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const emu = await startTestEmulator();
    const before = timers();
    const abort = new AbortController();
    const pending = fetch(`${emu.platformUrl}/v1/slow`, { headers: { 'x-emulator-fault': 'delay_ms=600000' }, signal: abort.signal }).catch(() => null);
    while (emu.emulator.journal.size() < 1) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    await pending;
    await emu.close();
    expect(timers()).toBeLessThanOrEqual(before); // a ref'd 10-minute timer would keep the process alive
  });
});
