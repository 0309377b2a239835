/**
 * A full disk (simulated ENOSPC on every write of the data dir, as the store's other tests do): the
 * writes are refused with the family's internal error, but `livez` stays 200 while the process serves,
 * `readyz` answers 503 `storage_failing` naming the problem (200 again once the disk takes a commit),
 * and read-only calls (the journal, the platform voice list) keep answering.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, control, startTestEmulator } from '../helpers/emulator.js';

const dir = mkdtempSync(join(tmpdir(), 'emulator-full-disk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a full disk', () => {
  it('keeps liveness and reads, says it in readiness, refuses writes', async () => {
    const emu = await startTestEmulator({ dataDir: dir });
    const ctl = control(emu.platformUrl);
    try {
      expect((await ctl.putAccount('disk-key', { project: 'before' })).status).toBe(200);
      emu.emulator.storageWrites.fail('ENOSPC');
      // A write is refused, naming the disk.
      const put = await ctl.putAccount('disk-key', { project: 'after' });
      expect(put.status).toBe(500);
      expect(put.body.error.message).toMatch(/ENOSPC/);

      const live = await ctl.call('GET', '/livez');
      expect(live.status).toBe(200);
      expect(live.body.status).toBe('ok');
      const ready = await ctl.call('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: 'storage_failing', problem: expect.stringMatching(/full \(ENOSPC\)/) });
      const health = await ctl.health();
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', ready: false, storage: { ok: false, problem: expect.stringMatching(/ENOSPC/) } });

      const journal = await ctl.journal({ limit: 5 });
      expect(journal.status).toBe(200);
      expect(Array.isArray(journal.body.entries)).toBe(true);
      const voices = await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'disk-key' } });
      expect(voices.status).toBe(200);
      expect(voices.body, JSON.stringify(voices.body).slice(0, 300)).toMatchObject({ succeed: true });

      // The disk takes writes again: the next write commits, readiness is back.
      emu.emulator.storageWrites.fail(null);
      expect((await ctl.putAccount('disk-key', { project: 'again' })).status).toBe(200);
      expect((await ctl.call('GET', '/readyz')).status).toBe(200);
    } finally {
      emu.emulator.storageWrites.fail(null);
      await emu.close();
    }
  });
});
