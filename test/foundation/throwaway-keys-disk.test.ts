/**
 * Keys that keep nothing cost no disk (100,000 such keys grew the store from 0.8 to 81 MB): an account
 * as its key builds it, with no record in any area, is not written, nor its id stream. An account that
 * holds something is written with it and comes back after a restart, its ids going on.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { upload } from '../platform/tts-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'emulator-throwaway-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const storeBytes = () => ['state.db', 'state.db-wal'].reduce((n, f) => n + (statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
const rows = (part: string) => {
  const db = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM parts WHERE part = ?').get(part) as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('a data dir and many throwaway keys', () => {
  it('500 keys whose requests keep nothing write no account and no id stream', async () => {
    const emu = await startTestEmulator({ dataDir: dir });
    const ctl = control(emu.platformUrl);
    // One written account, so commits happen along the way.
    await ctl.putAccount('kept-settings', { balance_micro: 7 });
    const before = storeBytes();
    for (let i = 0; i < 500; i++) {
      // Answered without keeping anything: a voice list and a refused synthesis (a trace id drawn for each).
      const list = await call(`${emu.speechUrl}/v1/get_voice`, { headers: { authorization: `Bearer throwaway-${i}` }, json: { voice_type: 'all' } });
      expect(list.status).toBe(200);
      await call(`${emu.speechUrl}/v1/t2a_v2`, { headers: { authorization: `Bearer refused-${i}` }, json: { model: 'no-such-model' } });
      if (i % 100 === 99) await ctl.putAccount('kept-settings', { balance_micro: i });
    }
    await emu.close();
    // Before: about 800 bytes per key (an account row and an id stream each).
    expect(storeBytes() - before).toBeLessThan(40 * 1024);
    expect(rows('accounts')).toBe(1);
    expect(rows('ids')).toBeLessThanOrEqual(1);
  }, 120_000);

  it('an account that holds an upload is written with it: after a restart the file is there and new ids go on', async () => {
    const ref = readFileSync(join(import.meta.dirname, '../../fixtures/remote/ref-5s.wav'));
    let emu = await startTestEmulator({ dataDir: dir });
    const first = await upload(emu.platformUrl, 'holder-key', ref, { name: 'a.wav' });
    expect(first.body.succeed).toBe(true);
    await emu.close();
    expect(rows('accounts')).toBe(2);
    emu = await startTestEmulator({ dataDir: dir });
    try {
      const state = await control(emu.platformUrl).state();
      expect((state.body.accounts as { account: string }[]).length).toBe(2);
      const second = await upload(emu.platformUrl, 'holder-key', ref, { name: 'b.wav' });
      expect(second.body.succeed).toBe(true);
      expect(second.body.data.object_key).not.toBe(first.body.data.object_key);
    } finally {
      await emu.close();
    }
  }, 60_000);
});
