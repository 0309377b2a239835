/**
 * The SQLite log stays bounded (589 MB of `state.db-wal` after 30,000 fault-rule adds, unchanged after
 * idling): fault rules are rows, so an add writes one rule instead of the whole list; the log is cut
 * back to WAL_LIMIT_BYTES whenever it starts over, and truncated to nothing once commits stop.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { IDLE_MS } from '../../src/core/state/store/checkpointer.js';
import { WAL_LIMIT_BYTES } from '../../src/core/state/store/database.js';
import { control, startTestEmulator } from '../helpers/emulator.js';

const dir = mkdtempSync(join(tmpdir(), 'emulator-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const walBytes = () => statSync(join(dir, 'state.db-wal'), { throwIfNoEntry: false })?.size ?? 0;
const RULES = 1500;

function faultRows(): { key: string; data: string }[] {
  const db = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
  try {
    return db.prepare("SELECT key, data FROM parts WHERE part = 'faults' ORDER BY seq").all() as { key: string; data: string }[];
  } finally {
    db.close();
  }
}

describe('the write-ahead log of a data dir', () => {
  it(`${RULES} fault-rule adds keep the log small, one row per rule; idle, the log is emptied`, async () => {
    const emu = await startTestEmulator({ dataDir: dir });
    const ctl = control(emu.platformUrl);
    let maxWal = 0;
    try {
      // A long rule: the whole list rewritten per add would be ~1 MB per commit by the end.
      const rule = (i: number) => ({ path: `/v1/never-called-${i}-${'x'.repeat(600)}`, times: 1, fault: { code: 1002 } });
      for (let i = 0; i < RULES; i++) {
        expect((await ctl.addFault(rule(i))).status).toBe(201);
        if (i % 50 === 0) maxWal = Math.max(maxWal, walBytes());
      }
      maxWal = Math.max(maxWal, walBytes());
      expect(maxWal).toBeLessThan(WAL_LIMIT_BYTES + 1024 * 1024);
      // Commits stopped: the log is truncated to nothing.
      const until = Date.now() + IDLE_MS + 6000;
      while (walBytes() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
      expect(walBytes()).toBe(0);
      expect((await ctl.faults()).body.rules).toHaveLength(RULES);
    } finally {
      await emu.close();
    }
    const rows = faultRows();
    expect(rows).toHaveLength(RULES + 1);
    expect(rows.filter((r) => r.key.startsWith('fault_'))).toHaveLength(RULES);
  }, 180_000);

  it('after a restart the rules are back in order and ids go on; a whole-list row of an earlier version is read and written as rows', async () => {
    // An earlier version's row: the whole list in one row.
    const db = new DatabaseSync(join(dir, 'state.db'));
    const rules = faultRows()
      .filter((r) => r.key.startsWith('fault_'))
      .slice(0, 3)
      .map((r) => JSON.parse(r.data));
    db.exec("DELETE FROM parts WHERE part = 'faults'");
    db.prepare("INSERT INTO parts (part, key, seq, data) VALUES ('faults', '', 1000000, ?)").run(JSON.stringify({ rules, counter: 40 }));
    db.close();
    const emu = await startTestEmulator({ dataDir: dir });
    try {
      const ctl = control(emu.platformUrl);
      expect(((await ctl.faults()).body.rules as { id: string }[]).map((r) => r.id)).toEqual(['fault_1', 'fault_2', 'fault_3']);
      expect((await ctl.addFault({ path: '/v1/after', fault: { code: 1002 } })).body.id).toBe('fault_41');
      expect((await ctl.clearFaults('fault_2')).status).toBeLessThan(300);
    } finally {
      await emu.close();
    }
    expect(faultRows().map((r) => r.key)).toEqual(
      ['#counter', 'fault_1', 'fault_3', 'fault_41'].sort((a, b) => (a === '#counter' ? -1 : b === '#counter' ? 1 : 0)),
    );
  }, 60_000);
});
