/**
 * `kill -9` during a reset used to lock every account out: the reset removed its files before it
 * committed, so the next start refused the data dir (`stored file … is missing`). A reset now commits
 * first and removes files after, and a record whose file is missing (deleted by hand) no longer stops
 * the start: the start names the records that lost their content, and an operation on one answers the
 * family's error saying its stored file is missing. Real processes, killed with SIGKILL.
 */
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator } from '../helpers/child.js';
import { codeOf, msgOf, speechApi } from '../speech/beyond.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'emulator-reset-crash-'));
  dirs.push(d);
  return d;
};
const args = (dir: string) => ['--data-dir', dir, '--seed', 'reset-crash', '--log-level', 'warn'];

/** Every speech file of `key` listed, and whether its content can be read. */
async function filesOf(url: string, key: string): Promise<{ id: string; readable: boolean }[]> {
  const api = speechApi(url, key);
  const list = await api.get('/v1/files/list?purpose=voice_clone');
  const out: { id: string; readable: boolean }[] = [];
  for (const f of list.body.files as { file_id: string }[]) {
    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${f.file_id}`);
    out.push({ id: f.file_id, readable: content.status === 200 && codeOf(content) === undefined });
  }
  return out;
}

describe('a reset killed with SIGKILL', () => {
  it('at any point leaves a data dir that starts, with every listed file readable', async () => {
    const dir = fresh();
    const key = 'reset-crash-key';
    for (const delayMs of [0, 3, 10, 30]) {
      const first = await spawnEmulator(args(dir));
      const api = speechApi(first.speechUrl, key);
      const wav = await api.audio('Kept until the reset.');
      for (let i = 0; i < 25; i++) expect(codeOf(await api.upload('voice_clone', wav, `f${i}.wav`))).toBe(0);
      // The reset and the kill race: the kill lands before, during or after the reset.
      void fetch(`${first.speechUrl}/_emulator/reset`, { method: 'POST' }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, delayMs));
      first.child.kill('SIGKILL');
      await first.exited;

      const again = await spawnEmulator(args(dir));
      try {
        const files = await filesOf(again.speechUrl, key);
        // Either the reset was committed (nothing listed) or not (everything still there and readable).
        for (const f of files) expect(f, `after a kill ${delayMs} ms into the reset`).toMatchObject({ readable: true });
        // Leave the account empty for the next round.
        await fetch(`${again.speechUrl}/_emulator/reset`, { method: 'POST' }).then((r) => r.text());
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    }
  }, 240_000);

  it('a stored file deleted by hand: the start names the record, the emulator runs, the file answers that its content is missing', async () => {
    const dir = fresh();
    const key = 'lost-file-key';
    const first = await spawnEmulator(args(dir));
    const api = speechApi(first.speechUrl, key);
    const wav = await api.audio('This file will be lost.');
    const lost = (await api.upload('voice_clone', wav, 'lost.wav')).body.file.file_id as number;
    const kept = (await api.upload('voice_clone', wav, 'kept.wav')).body.file.file_id as number;
    first.child.kill('SIGTERM');
    await first.exited;

    const db = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
    const rows = db.prepare("SELECT id, data FROM records WHERE area = 'speech-files'").all() as { id: string; data: string }[];
    db.close();
    const row = rows.find((r) => JSON.parse(r.data).file_id === lost || JSON.parse(r.data).fileId === lost || r.data.includes(String(lost)))!;
    expect(row).toBeDefined();
    unlinkSync(join(dir, 'blobs', JSON.parse(row.data).blob));

    const again = await spawnEmulator(args(dir));
    try {
      expect(again.output()).toMatch(/1 record\(s\) in .*state\.db lost their content/);
      expect(again.output()).toContain(`record ${row.id} of speech-files`);
      const api2 = speechApi(again.speechUrl, key);
      const gone = await api2.getBytes(`/v1/files/retrieve_content?file_id=${lost}`);
      expect(codeOf(gone)).toBe(1000);
      expect(msgOf(gone)).toMatch(/stored file .* is missing from the data dir/);
      const ok = await api2.getBytes(`/v1/files/retrieve_content?file_id=${kept}`);
      expect(ok.status).toBe(200);
      expect(codeOf(ok)).toBeUndefined();
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 120_000);
});
