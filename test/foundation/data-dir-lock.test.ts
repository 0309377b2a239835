import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/index.js';
import { spawnEmulator } from '../helpers/child.js';
import { call, startTestEmulator } from '../helpers/emulator.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lock-'));
  dirs.push(d);
  return join(d, 'data');
}

/** Every file and folder below `dir`, with its permission bits. */
function modes(dir: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    out.push({ path, dir: st.isDirectory(), mode: st.mode & 0o777 });
    if (st.isDirectory()) out.push(...modes(path));
  }
  return out;
}

describe('the data dir is private and held by one emulator', () => {
  it("every file the emulator writes there is 0600 and every folder 0700, the database's log included", async () => {
    const dir = dataDir();
    const emu = await startTestEmulator({ dataDir: dir });
    try {
      const t2a = await call(`${emu.speechUrl}/v1/t2a_v2`, {
        headers: { authorization: 'Bearer modes-key' },
        json: { model: 'speech-2.8-hd', text: 'A stored file.', output_format: 'url', voice_setting: { voice_id: 'male-qn-qingse' } },
      });
      expect(t2a.body.base_resp.status_code).toBe(0);
      await emu.control.faults.add({ path: '/v1/t2a_v2', fault: { code: 1002 } });
      const all = modes(dir);
      expect(all.some((f) => f.path.endsWith('state.db-wal'))).toBe(true);
      expect(all.some((f) => f.path.includes(`${join('blobs', 'speech')}`) && !f.dir)).toBe(true);
      for (const f of all) expect(f.mode.toString(8), f.path).toBe(f.dir ? '700' : '600');
      expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
    } finally {
      await emu.close();
    }
  });

  it('a second emulator on the same data dir is refused naming the holder; once the first closes it starts', async () => {
    const dir = dataDir();
    const first = await startTestEmulator({ dataDir: dir });
    let refusal = '';
    try {
      await startEmulator({ seed: 't', logLevel: 'silent', dataDir: dir });
    } catch (err) {
      refusal = (err as Error).message;
    }
    expect(refusal).toMatch(
      new RegExp(
        `^data dir .* is in use by another speech-emulator \\(pid ${process.pid} on host .+, since \\d{4}-.+\\): stop it, or give this one another --data-dir$`,
      ),
    );
    // The first one kept working and kept its state.
    expect((await first.control.health()).status).toBe('ok');
    await first.close();
    const second = await startTestEmulator({ dataDir: dir });
    await second.close();
  });

  it('the CLI refuses with one line while another process holds it, and takes over the lock of a process killed with -9', async () => {
    const dir = dataDir();
    const holder = await spawnEmulator(['--data-dir', dir, '--log-level', 'warn']);
    try {
      const refused = await spawnEmulator(['--data-dir', dir]).then(
        () => 'started',
        (err: Error) => err.message,
      );
      const line = refused.split('\n').find((l) => l.startsWith('speech-emulator:')) ?? refused;
      expect(line).toMatch(new RegExp(`^speech-emulator: cannot start: data dir .* is in use by another speech-emulator \\(pid ${holder.child.pid} on host `));
      expect(refused).not.toContain('    at ');
    } finally {
      holder.child.kill('SIGKILL');
      await holder.exited;
    }
    // The dead process's lock is gone with it: the next start takes the data dir over.
    const next = await spawnEmulator(['--data-dir', dir, '--log-level', 'warn']);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe('0');
  }, 120_000);
});
