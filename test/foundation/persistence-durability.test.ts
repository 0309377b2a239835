// Acknowledged means durable: a write the data dir cannot keep is refused with the family's internal error.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { upload } from '../platform/tts-helpers.js';
import { PANGRAM, speechApi } from '../speech/beyond.js';

/**
 * The emulator runs as root here, and `chmod` does not stop root: a read-only or full data dir is
 * reproduced by failing the write path itself (`emulator.storageWrites.fail(code)`, core/state/storage.ts),
 * which fails every snapshot and stored-file write as the kernel would. Where the machine allows
 * `mount -t tmpfs`, a real 1 MB tmpfs and a real read-only remount are used too; elsewhere those tests
 * are skipped, saying why.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'emulator-durable-'));
  dirs.push(d);
  return d;
}

const KEY = 'durable-key';
const platformHeaders = { 'x-api-key': KEY };
const NONCE = '8b9d7c1e-3f4a-4b5c-9d6e-7f8091a2b3c4';

describe('a write the data dir cannot keep is never acknowledged (simulated ENOSPC / EROFS on the write path)', () => {
  it('control 500, platform internal (calls 50000) and speech 1000 name the full disk; after a restart nothing refused is there, and a write after recovery is', async () => {
    const dir = freshDir();
    let emu = await startTestEmulator({ dataDir: dir });
    try {
      emu.emulator.storageWrites.fail('ENOSPC');
      const put = await control(emu.speechUrl).putAccount('refused-key', { project: 'refused' });
      expect(put.status).toBe(500);
      expect(put.body.error.message).toBe('the change could not be saved: the disk of the data dir is full (ENOSPC) writing state.db');

      const session = await call(`${emu.platformUrl}/v1/audio/assistant/start`, { headers: platformHeaders, json: { client_nonce: NONCE } });
      expect(session.body.succeed).toBe(false);
      // The call family's internal error is 50000 (docs/platform-http.md); others answer 10000.
      expect(session.body.error_code).toBe(50000);
      expect(session.body.error_message).toMatch(/could not be saved: the disk of the data dir is full \(ENOSPC\)/);

      const speech = speechApi(emu.speechUrl, KEY);
      const design = await speech.post('/v1/voice_design', { prompt: 'A calm narrator.', preview_text: 'Hello there.' });
      expect(design.body.base_resp.status_code).toBe(1000);
      expect(design.body.base_resp.status_msg).toMatch(/full \(ENOSPC\)/);

      // JSON-RPC on /mcp: its internal error, saying the same.
      const rpc = await call(`${emu.platformUrl}/mcp`, {
        headers: platformHeaders,
        json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {} } },
      });
      expect(rpc.body.error.code).toBe(-32603);
      expect(rpc.body.error.message).toMatch(/^internal error: the change could not be saved: .*ENOSPC/);

      // Read-only is said as such.
      emu.emulator.storageWrites.fail('EROFS');
      const readOnly = await control(emu.speechUrl).putAccount('refused-key', { project: 'again' });
      expect(readOnly.status).toBe(500);
      expect(readOnly.body.error.message).toMatch(/the data dir is read-only \(EROFS\)/);
      await emu.close(); // its last save fails as well (logged)

      emu = await startTestEmulator({ dataDir: dir });
      expect((await control(emu.speechUrl).account('refused-key')).body.project).not.toBe('refused');
      const state = await control(emu.speechUrl).state();
      expect(JSON.stringify(state.body)).not.toContain('refused');

      // The disk recovers: the next write is acknowledged and kept.
      const ok = await control(emu.speechUrl).putAccount('kept-key', { project: 'kept' });
      expect(ok.status).toBe(200);
      await emu.close();
      emu = await startTestEmulator({ dataDir: dir });
      expect((await control(emu.speechUrl).account('kept-key')).body.project).toBe('kept');
    } finally {
      await emu.close();
    }
  });

  it('a write refused mid-run keeps failing every write until the disk takes it; reads answer from memory meanwhile', async () => {
    const emu = await startTestEmulator({ dataDir: freshDir() });
    try {
      emu.emulator.storageWrites.fail('ENOSPC');
      expect((await control(emu.speechUrl).putAccount('pending-key', { project: 'pending' })).status).toBe(500);
      // Every later write is refused too; a read answers from memory (docs/robustness.md), and readiness says why.
      expect((await control(emu.speechUrl).putAccount('other-key', { project: 'x' })).status).toBe(500);
      expect((await control(emu.speechUrl).account('pending-key')).status).toBe(200);
      expect((await control(emu.speechUrl).call('GET', '/readyz')).status).toBe(503);
      emu.emulator.storageWrites.fail(null);
      expect((await control(emu.speechUrl).putAccount('other-key', { project: 'x' })).status).toBe(200);
      const read = await control(emu.speechUrl).account('pending-key');
      expect(read.status).toBe(200);
    } finally {
      await emu.close();
    }
  });
});

describe('stored files: missing or not writable', () => {
  it('speech voice_clone on a file whose stored file was deleted answers 1000 naming the missing file', async () => {
    const dir = freshDir();
    const emu = await startTestEmulator({ dataDir: dir });
    try {
      const api = speechApi(emu.speechUrl, KEY);
      const fileId = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
      const blobDir = join(dir, 'blobs', 'speech-files');
      const stored = execFileSync('find', [blobDir, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
      expect(stored).toHaveLength(1);
      unlinkSync(stored[0]!);
      const clone = await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'MissingBlob1' });
      expect(clone.status).toBe(200);
      expect(clone.body.base_resp.status_code).toBe(1000);
      expect(clone.body.base_resp.status_msg).toMatch(/^the stored file speech-files\/.+ is missing from the data dir/);
      expect(clone.body.base_resp.status_msg).not.toMatch(/ENOENT: no such file/);
      const content = await api.get(`/v1/files/retrieve_content?file_id=${fileId}`);
      expect(content.body.base_resp.status_code).toBe(1000);
      expect(content.body.base_resp.status_msg).toBe(clone.body.base_resp.status_msg);
    } finally {
      await emu.close();
    }
  });

  it('a full disk during an upload is the internal error saying so (platform 10000, speech 1000), not a parameter error', async () => {
    const emu = await startTestEmulator({ dataDir: freshDir() });
    try {
      const wav = readFileSync(join(import.meta.dirname, '../../fixtures/remote/ref-5s.wav'));
      emu.emulator.storageWrites.fail('ENOSPC');
      const up = await upload(emu.platformUrl, KEY, wav, { name: 'ref.wav' });
      expect(up.body.error_code).toBe(10000);
      expect(up.body.error_message).toMatch(/could not be stored: the disk of the data dir is full \(ENOSPC\)/);
      const speech = await speechApi(emu.speechUrl, KEY).upload('voice_clone', wav);
      expect(speech.body.base_resp.status_code).toBe(1000);
      expect(speech.body.base_resp.status_msg).toMatch(/could not be stored: the disk of the data dir is full \(ENOSPC\)/);
      // Generated files: a T2A link and a podcast; an error answer that acknowledges nothing (2013) stays as it was.
      const api = speechApi(emu.speechUrl, KEY);
      const link = await api.post('/v1/t2a_v2', {
        model: 'speech-02-hd',
        text: 'Hi there.',
        voice_setting: { voice_id: 'female-shaonv' },
        output_format: 'url',
      });
      expect(link.body.base_resp).toMatchObject({ status_code: 1000, status_msg: expect.stringMatching(/^the file speech\/.+ could not be stored: .*ENOSPC/) });
      const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, {
        headers: platformHeaders,
        json: { dialogueText: 'Hello and welcome.\nThanks for having me.' },
      });
      expect(pod.body).toMatchObject({
        succeed: false,
        error_code: 10000,
        error_message: expect.stringMatching(/^the file podcasts\/.+ could not be stored: .*ENOSPC/),
      });
      const bad = await api.post('/v1/t2a_v2', { model: 'nope', text: 'Hi there.' });
      expect(bad.body.base_resp.status_code).toBe(2013);
      emu.emulator.storageWrites.fail(null);
      expect((await upload(emu.platformUrl, KEY, wav, { name: 'ref.wav' })).body.succeed).toBe(true);
    } finally {
      await emu.close();
    }
  });
});

/** Mounts a tmpfs of `size` at a new folder, or answers why it cannot be done here. */
function tryTmpfs(size: string): { dir: string } | { skip: string } {
  const dir = mkdtempSync(join(tmpdir(), 'emulator-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `mount -t tmpfs is not permitted here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})` };
  }
}
function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
}
const probe = tryTmpfs('64k');
const tmpfsSkip = 'skip' in probe ? probe.skip : null;
if (!('skip' in probe)) unmount(probe.dir);
if (tmpfsSkip) console.warn(`real tmpfs tests skipped: ${tmpfsSkip}`);

describe.skipIf(tmpfsSkip !== null)('a real small tmpfs (needs mount; the simulated tests above cover the same paths)', () => {
  it('a full 1 MB disk: the upload that does not fit is 10000 ENOSPC, and nothing acknowledged is lost', async () => {
    const mounted = tryTmpfs('1m') as { dir: string };
    const dataDir = join(mounted.dir, 'data');
    mkdirSync(dataDir);
    let emu = await startTestEmulator({ dataDir });
    try {
      expect((await control(emu.speechUrl).putAccount('small-disk', { project: 'before' })).status).toBe(200);
      const big = Buffer.concat([readFileSync(join(import.meta.dirname, '../../fixtures/remote/ref-5s.wav')), Buffer.alloc(2 * 1024 * 1024, 1)]);
      const up = await upload(emu.platformUrl, KEY, big, { name: 'big.wav' });
      expect(up.body.error_code).toBe(10000);
      expect(up.body.error_message).toMatch(/full \(ENOSPC\)/);
      // Fill what is left: a change larger than the log's pages already on disk cannot be written, so it is refused.
      execFileSync('sh', ['-c', `dd if=/dev/zero of=${join(mounted.dir, 'filler')} bs=4k 2>/dev/null || true`]);
      const put = await control(emu.speechUrl).putAccount('small-disk', { project: `after-${'x'.repeat(256 * 1024)}` });
      expect(put.status).toBe(500);
      expect(put.body.error.message).toMatch(/ENOSPC/);
      await emu.close();
      unlinkSync(join(mounted.dir, 'filler'));
      emu = await startTestEmulator({ dataDir });
      expect((await control(emu.speechUrl).account('small-disk')).body.project).toBe('before');
    } finally {
      await emu.close();
      unmount(mounted.dir);
    }
  });

  it('a full disk at start stops the start with one line, and the database stays as it was', async () => {
    const mounted = tryTmpfs('1m') as { dir: string };
    const dataDir = join(mounted.dir, 'data');
    mkdirSync(dataDir);
    try {
      const emu = await startTestEmulator({ dataDir });
      expect((await control(emu.speechUrl).putAccount('full-at-start', { project: 'kept' })).status).toBe(200);
      await emu.close();
      const before = readFileSync(join(dataDir, 'state.db'));
      execFileSync('sh', ['-c', `dd if=/dev/zero of=${join(mounted.dir, 'filler')} bs=4k 2>/dev/null || true`]);
      const refused = await startTestEmulator({ dataDir }).then(
        async (e) => {
          await e.close();
          return null;
        },
        (err: Error) => err.message,
      );
      expect(refused).toBe(`data dir ${dataDir} cannot hold the emulator's state: a file cannot be written in it (ENOSPC)`);
      expect(readFileSync(join(dataDir, 'state.db')).equals(before)).toBe(true);
      unlinkSync(join(mounted.dir, 'filler'));
      const again = await startTestEmulator({ dataDir });
      try {
        expect((await control(again.speechUrl).account('full-at-start')).body.project).toBe('kept');
      } finally {
        await again.close();
      }
    } finally {
      unmount(mounted.dir);
    }
  });

  it('a read-only data dir mid-run refuses writes with EROFS; read-only at start stops the start with one line', async () => {
    const mounted = tryTmpfs('4m') as { dir: string };
    const dataDir = join(mounted.dir, 'data');
    mkdirSync(dataDir);
    const emu = await startTestEmulator({ dataDir });
    try {
      expect((await control(emu.speechUrl).putAccount('ro-key', { project: 'before' })).status).toBe(200);
      // The kernel refuses to remount read-only a file system with a file open for writing, and the state
      // database is open for the emulator's whole life: only a forced remount (errors=remount-ro after an
      // I/O error) turns it read-only mid-run. The simulated EROFS stands for that here.
      expect(() => execFileSync('mount', ['-o', 'remount,ro', mounted.dir], { stdio: 'pipe' })).toThrow(/busy/);
      emu.emulator.storageWrites.fail('EROFS');
      const put = await control(emu.speechUrl).putAccount('ro-key', { project: 'after' });
      expect(put.status).toBe(500);
      expect(put.body.error.message).toMatch(/read-only \(EROFS\)/);
      const session = await call(`${emu.platformUrl}/v1/audio/assistant/start`, { headers: platformHeaders, json: { client_nonce: NONCE } });
      expect(session.body.error_code).toBe(50000);
      await emu.close();
      execFileSync('mount', ['-o', 'remount,ro', mounted.dir]);
      // A state in a read-only data dir: the start stops, with one line naming the folder and why.
      const refused = await startTestEmulator({ dataDir }).then(
        async (e) => {
          await e.close();
          return null;
        },
        (err: Error) => err.message,
      );
      expect(refused).toBe(`data dir ${dataDir} cannot hold the emulator's state: a file cannot be written in it (EROFS)`);
    } finally {
      await emu.close();
      execFileSync('mount', ['-o', 'remount,rw', mounted.dir]);
      unmount(mounted.dir);
    }
  });
});
