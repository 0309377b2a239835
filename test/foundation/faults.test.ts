import { beforeEach, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile();
const IGNORED = 'x-emulator-fault-ignored';
beforeEach(async () => {
  await ctl.reset();
});

/** A 404 route takes no fault field, so a fault that reached it shows in X-Emulator-Fault-Ignored. */
async function hit(base: string, path = '/nowhere', headers: Record<string, string> = {}) {
  const r = await call(`${base}${path}`, { headers });
  expect(r.status).toBe(404);
  return r.headers.get(IGNORED);
}

describe('X-Emulator-Fault header', () => {
  it('reports fields the route cannot express, on both services', async () => {
    expect(await hit(emu.speechUrl, '/nowhere', { 'x-emulator-fault': 'code=1002;cut_after_chunks=3' })).toBe('code, cut_after_chunks');
    expect(await hit(emu.platformUrl, '/nowhere', { 'x-emulator-fault': 'status=429' })).toBe('status');
    expect(await hit(emu.speechUrl)).toBeNull();
  });

  it('delay_ms measurably delays the answer and is not reported ignored', async () => {
    const t0 = performance.now();
    const ignored = await hit(emu.speechUrl, '/slow', { 'x-emulator-fault': 'delay_ms=200' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    expect(ignored).toBeNull();
  });

  it('a header with one unknown field applies the valid ones, names the unknown one, and the journal shows the fault', async () => {
    const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      headers: { authorization: 'Bearer typo-key', 'x-emulator-fault': 'code=1002;delay_ms=10;typo_ms=5' },
      json: { model: 'speech-2.8-hd', text: 'Hello.', voice_setting: { voice_id: 'male-qn-qingse' } },
    });
    expect(r.body.base_resp.status_code).toBe(1002);
    expect(r.headers.get(IGNORED)).toBe('X-Emulator-Fault: "typo_ms" is not a fault field');
    const [entry] = (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries;
    expect(entry.fault).toMatchObject({ code: 1002, delay_ms: 10 });
  });

  it('what is echoed of an unreadable header is bounded', async () => {
    const ignored = await hit(emu.speechUrl, '/x', { 'x-emulator-fault': `code=${'9'.repeat(20)}x${'y'.repeat(12_000)};${'z=1;'.repeat(100)}` });
    expect(ignored!.length).toBeLessThan(600);
    expect(ignored).toContain('and 96 more');
  });

  it('an unreadable header is reported, never dropped in silence', async () => {
    expect(await hit(emu.speechUrl, '/x', { 'x-emulator-fault': 'code=abc' })).toMatch(/X-Emulator-Fault.*code=abc/);
    expect(await hit(emu.speechUrl, '/x', { 'x-emulator-fault': 'explode=1' })).toMatch(/explode/);
  });

  it('the header wins over a queued rule and leaves the rule untouched', async () => {
    await ctl.addFault({ path: '/x', fault: { status: 500 } });
    expect(await hit(emu.platformUrl, '/x', { 'x-emulator-fault': 'code=10001' })).toBe('code');
    expect((await ctl.faults()).body.rules[0].remaining).toBe(1);
  });
});

describe('queued fault rules', () => {
  it('times: consumed request by request, listed with remaining, then gone', async () => {
    const add = await ctl.addFault({ path: '/queued', method: 'get', times: 2, fault: { code: 1039 } });
    expect(add.status).toBe(201);
    const id = add.body.id as string;
    expect(typeof id).toBe('string');
    let list = (await ctl.faults()).body.rules;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id, path: '/queued', method: 'GET', times: 2, remaining: 2, fault: { code: 1039 } });

    expect(await hit(emu.speechUrl, '/other')).toBeNull(); // another path does not consume it
    expect(await hit(emu.speechUrl, '/queued')).toBe('code');
    expect((await ctl.faults()).body.rules[0].remaining).toBe(1);
    expect(await hit(emu.speechUrl, '/queued')).toBe('code');
    expect((await ctl.faults()).body.rules).toEqual([]);
    expect(await hit(emu.speechUrl, '/queued')).toBeNull();
  });

  it('times default to 1; "always" never runs out', async () => {
    await ctl.addFault({ path: '/once', fault: { status: 503 } });
    await ctl.addFault({ path: '/always', times: 'always', fault: { status: 503 } });
    expect(await hit(emu.platformUrl, '/once')).toBe('status');
    expect(await hit(emu.platformUrl, '/once')).toBeNull();
    for (let i = 0; i < 5; i++) expect(await hit(emu.platformUrl, '/always')).toBe('status');
    const rules = (await ctl.faults()).body.rules;
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ times: 'always', remaining: 'always' });
  });

  it('a path ending in * matches the prefix', async () => {
    await ctl.addFault({ path: '/v1/files/*', times: 'always', fault: { code: 1 } });
    expect(await hit(emu.platformUrl, '/v1/files/list')).toBe('code');
    expect(await hit(emu.platformUrl, '/v1/other')).toBeNull();
  });

  it('service filter: speech, speech-backup and platform are told apart', async () => {
    await ctl.addFault({ service: 'speech-backup', times: 'always', fault: { code: 1000 } });
    expect(await hit(emu.speechUrl)).toBeNull();
    expect(await hit(emu.platformUrl)).toBeNull();
    expect(await hit(emu.speechBackupUrl)).toBe('code');
    await ctl.clearFaults();
    await ctl.addFault({ service: 'speech', times: 'always', fault: { code: 1000 } });
    expect(await hit(emu.speechBackupUrl)).toBeNull();
    expect(await hit(emu.platformUrl)).toBeNull();
    expect(await hit(emu.speechUrl)).toBe('code');
    await ctl.clearFaults();
    await ctl.addFault({ service: 'platform', times: 'always', fault: { code: 1000 } });
    expect(await hit(emu.speechUrl)).toBeNull();
    expect(await hit(emu.platformUrl)).toBe('code');
  });

  it('account filter: only requests with that key, and the key is not listed in full', async () => {
    const key = 'fault-account-key-123456';
    const add = await ctl.addFault({ account: key, times: 'always', fault: { code: 1000 } });
    expect(add.text).not.toContain(key);
    expect(await hit(emu.speechUrl, '/a', { authorization: 'Bearer other-key-999' })).toBeNull();
    expect(await hit(emu.speechUrl, '/a', { authorization: `Bearer ${key}` })).toBe('code');
    expect(await hit(emu.platformUrl, '/a', { 'x-api-key': key })).toBe('code');
    const list = await ctl.faults();
    expect(list.text).not.toContain(key);
    expect(list.body.rules[0].account).toMatch(/^faul…[0-9a-f]{6}$/);
  });

  it('seeded probability: the same sequence twice after reset, and not all the same', async () => {
    const run = async () => {
      await ctl.reset();
      await ctl.addFault({ probability: 0.5, times: 'always', fault: { code: 1000 } });
      const seq: boolean[] = [];
      for (let i = 0; i < 16; i++) seq.push((await hit(emu.speechUrl)) !== null);
      return seq;
    };
    const a = await run();
    const b = await run();
    expect(b).toEqual(a);
    expect(a).toContain(true);
    expect(a).toContain(false);
  });

  it('probability 0 never fires and is not consumed', async () => {
    await ctl.addFault({ probability: 0, fault: { code: 1000 } });
    for (let i = 0; i < 3; i++) expect(await hit(emu.speechUrl)).toBeNull();
    expect((await ctl.faults()).body.rules[0].remaining).toBe(1);
  });

  it('DELETE one rule by id, unknown id 404, DELETE all', async () => {
    const a = (await ctl.addFault({ path: '/a', fault: { code: 1 } })).body.id;
    const b = (await ctl.addFault({ path: '/b', fault: { code: 1 } })).body.id;
    expect(a).not.toBe(b);
    expect((await ctl.clearFaults(a)).status).toBe(200);
    expect((await ctl.faults()).body.rules.map((r: { id: string }) => r.id)).toEqual([b]);
    const missing = await ctl.clearFaults(a);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain(a);
    await ctl.addFault({ path: '/c', fault: { code: 1 } });
    expect((await ctl.clearFaults()).status).toBe(200);
    expect((await ctl.faults()).body.rules).toEqual([]);
    expect(await hit(emu.speechUrl, '/b')).toBeNull();
  });

  it('invalid rules answer 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ fault: {} }, 'fault'],
      [{ fault: { explode: 1 } }, 'explode'],
      [{ fault: { status: 99 } }, 'status'],
      [{ times: 0, fault: { code: 1 } }, 'times'],
      [{ times: 'often', fault: { code: 1 } }, 'times'],
      [{ probability: 1.5, fault: { code: 1 } }, 'probability'],
      [{ service: 'mail', fault: { code: 1 } }, 'service'],
      [{ path: 'no-slash', fault: { code: 1 } }, 'path'],
      [{ colour: 'red', fault: { code: 1 } }, 'colour'],
      [{}, 'fault'],
    ];
    for (const [body, word] of cases) {
      const r = await ctl.addFault(body as Record<string, unknown>);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toContain(word);
    }
    expect((await ctl.faults()).body.rules).toEqual([]);
  });
});
