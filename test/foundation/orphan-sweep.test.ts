/**
 * Stored files no record names (left by a `kill -9` between a file's write and its record's commit,
 * or during a reset after its commit) are swept when the emulator starts on its data dir; a file a
 * record names is never removed, nor a file reached by a signed link only. Real processes on a real
 * data dir; the orphans are made by hand.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator } from '../helpers/child.js';
import { codeOf, speechApi } from '../speech/beyond.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const args = (dir: string) => ['--data-dir', dir, '--seed', 'orphan-sweep', '--log-level', 'info'];

function put(blobs: string, rel: string): string {
  mkdirSync(dirname(join(blobs, rel)), { recursive: true });
  writeFileSync(join(blobs, rel), 'bytes no record names');
  return rel;
}

describe('the start sweeps stored files no record names', () => {
  it('orphans of the record kinds go, with a count in the banner and the log; recorded and link-only files stay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulator-orphans-'));
    dirs.push(dir);
    const key = 'orphan-sweep-key';
    const first = await spawnEmulator(args(dir));
    const api = speechApi(first.speechUrl, key);
    const wav = await api.audio('A file with its record.');
    const kept = (await api.upload('voice_clone', wav, 'kept.wav')).body.file.file_id as number;
    const form = new FormData();
    form.append('scene', 'audio');
    form.append('file', new Blob([wav]), 'upload.wav');
    const upload = (await (await fetch(`${first.platformUrl}/v1/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as any;
    expect(upload.succeed).toBe(true);
    const objectKey = upload.data.object_key as string;
    first.child.kill('SIGTERM');
    await first.exited;

    const blobs = join(dir, 'blobs');
    const account = readdirSync(join(blobs, 'speech-files'))[0]!;
    const recorded = [`speech-files/${account}/${kept}.wav`, objectKey];
    for (const rel of recorded) expect(existsSync(join(blobs, rel)), rel).toBe(true);
    // What a kill leaves: a file written whose record was never committed, an upload being received, a write's temporary file.
    const orphans = [
      put(blobs, `speech-files/${account}/987654321.wav`),
      put(blobs, `uploads/audio/${account}/999-never-recorded.wav`),
      put(blobs, `voices/${account}/abc-gone.wav`),
      put(blobs, `incoming/${account}/0123456789abcdef`),
      put(blobs, `speech-files/${account}/${kept}.wav.tmp-4242-1`),
    ];
    // Reached by a signed link only: no record by design.
    const linkOnly = [put(blobs, `speech/${account}/trace-1.mp3`), put(blobs, `speech-files/${account}/demo-0011.mp3`), put(blobs, `mcp/${account}/x.mp3`)];
    // Named by a row of an area this version does not read (a later version's): kept.
    const future = put(blobs, `uploads/audio/${account}/future-area.wav`);
    const db = new DatabaseSync(join(dir, 'state.db'));
    db.prepare('INSERT INTO records (area, id, account, seq, data) VALUES (?, ?, ?, ?, ?)').run(
      'an-area-of-a-later-version',
      'r1',
      account,
      1_000_000,
      JSON.stringify({ file: future }),
    );
    db.close();

    const again = await spawnEmulator(args(dir));
    try {
      const out = again.output();
      expect(out).toMatch(/restored\s+.*; swept 5 stored files no record names/);
      expect(out).toContain(`swept 5 stored file(s) no record names from ${blobs}`);
      for (const rel of orphans) expect(existsSync(join(blobs, rel)), rel).toBe(false);
      for (const rel of [...recorded, ...linkOnly, future]) expect(existsSync(join(blobs, rel)), rel).toBe(true);
      // The recorded files still serve their content.
      const content = await speechApi(again.speechUrl, key).getBytes(`/v1/files/retrieve_content?file_id=${kept}`);
      expect(content.status).toBe(200);
      expect(codeOf(content)).toBeUndefined();
      expect(content.bytes.equals(wav)).toBe(true);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }

    // Nothing left to sweep: the next start says nothing of it.
    const third = await spawnEmulator(args(dir));
    try {
      expect(third.output()).not.toMatch(/swept/);
    } finally {
      third.child.kill('SIGTERM');
      await third.exited;
    }
  }, 120_000);
});
