import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator } from '../helpers/child.js';
import { call, control, startTestEmulator } from '../helpers/emulator.js';

/** A restart with --data-dir: the banner says what it restored; --reset-faults-on-start drops leftover fault rules. */
const dir = mkdtempSync(join(tmpdir(), 'restart-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T2A = { model: 'speech-02-turbo', text: 'Hello.', voice_setting: { voice_id: 'male-qn-qingse' } };
const t2aCode = async (url: string) =>
  (await call(`${url}/v1/t2a_v2`, { json: T2A, headers: { authorization: 'Bearer restart-key' } })).body.base_resp.status_code as number;

describe('restarting on a data dir', () => {
  it('the banner lists what was restored, leftover fault rules included; --reset-faults-on-start drops them', async () => {
    const first = await spawnEmulator(['--data-dir', dir]);
    expect(first.output()).not.toMatch(/restored .*fault rule/);
    const ctl = control(first.speechUrl);
    expect((await ctl.putAccount('restart-key', { stream_faults: { rtf: 2 } })).status).toBe(200);
    expect((await ctl.addFault({ path: '/v1/t2a_v2', times: 3, fault: { code: 1002 } })).status).toBe(201);
    first.child.kill('SIGTERM');
    await first.exited;

    const second = await spawnEmulator(['--data-dir', dir]);
    expect(second.output()).toMatch(
      /restored +1 account, \d+ resources?, 1 fault rule still queued \(GET \/_emulator\/faults; --reset-faults-on-start drops them\)/,
    );
    expect(await t2aCode(second.speechUrl)).toBe(1002); // the leftover rule fires
    second.child.kill('SIGTERM');
    await second.exited;

    const third = await spawnEmulator(['--data-dir', dir, '--reset-faults-on-start']);
    expect(third.output()).toMatch(/restored +1 account, \d+ resources?, 1 fault rule \(dropped: --reset-faults-on-start\)/);
    expect((await control(third.speechUrl).faults()).body.rules).toEqual([]);
    expect(await t2aCode(third.speechUrl)).toBe(0);
    third.child.kill('SIGTERM');
    await third.exited;
  }, 120_000);

  it('in process: resetFaultsOnStart, and what was restored on the running emulator', async () => {
    const own = mkdtempSync(join(tmpdir(), 'restart-faults-own-'));
    try {
      const a = await startTestEmulator({ dataDir: own });
      expect(a.restored).toEqual({ accounts: 0, resources: 0, fault_rules: 0, fault_rules_dropped: 0, orphan_files_swept: 0 });
      await control(a.speechUrl).addFault({ times: 'always', fault: { code: 1002 } });
      await a.close();
      const b = await startTestEmulator({ dataDir: own, resetFaultsOnStart: true });
      expect(b.restored).toMatchObject({ fault_rules: 1, fault_rules_dropped: 1 });
      expect(await t2aCode(b.speechUrl)).toBe(0);
      await b.close();
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
