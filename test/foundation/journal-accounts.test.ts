import { describe, expect, it } from 'vitest';
import { Ids } from '../../src/core/state/ids.js';
import { FRAME_HEAD, FRAME_TAIL } from '../../src/core/journal/journal.js';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech-backup', start: { journalLimit: 6 }, resetEach: true });
const KEY_A = 'sk-journal-alpha-0123456789abcdef';
const KEY_B = 'sk-journal-bravo-0123456789abcdef';

const speech = (path: string, key?: string) => call(`${emu.speechUrl}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
const platform = (path: string, key?: string) => call(`${emu.platformUrl}${path}`, { headers: key ? { 'x-api-key': key } : {} });

describe('journal', () => {
  it('records requests newest first with the documented fields; control calls are not journaled', async () => {
    await speech('/first', KEY_A);
    await platform('/second', KEY_B);
    await ctl.clock();
    const r = await ctl.journal();
    expect(r.status).toBe(200);
    const [second, first] = r.body.entries;
    expect(r.body.entries).toHaveLength(2);
    expect(first).toMatchObject({ service: 'speech', method: 'GET', path: '/first', status: 404 });
    expect(second).toMatchObject({ service: 'platform', method: 'GET', path: '/second', status: 404 });
    for (const e of [first, second]) {
      expect(typeof e.id).toBe('string');
      expect(typeof e.at_ms).toBe('number');
      expect(typeof e.duration_ms).toBe('number');
      expect(e.request.headers).toBeTypeOf('object');
      expect(e.response).toBeTypeOf('object');
      expect(e).not.toHaveProperty('accountId');
    }
    expect(first.account).toMatch(/^sk-j…[0-9a-f]{6}$/);
    expect(first.account).not.toBe(second.account);
  });

  it('at_ms is the emulator clock', async () => {
    await ctl.setClock({ freeze: true, set_ms: 1_600_000_000_000 });
    await speech('/when');
    expect((await ctl.journal()).body.entries[0].at_ms).toBe(1_600_000_000_000);
  });

  it('filters by path, by account (full key) and limit', async () => {
    await speech('/p1', KEY_A);
    await speech('/p2', KEY_B);
    await platform('/p1', KEY_B);
    const byPath = (await ctl.journal({ path: '/p1' })).body.entries;
    expect(byPath.map((e: { service: string }) => e.service)).toEqual(['platform', 'speech']);
    const byAccount = (await ctl.journal({ account: KEY_B })).body.entries;
    expect(byAccount.map((e: { path: string }) => e.path)).toEqual(['/p1', '/p2']);
    expect((await ctl.journal({ account: 'nobody-at-all' })).body.entries).toEqual([]);
    const limited = (await ctl.journal({ limit: 1 })).body.entries;
    expect(limited).toHaveLength(1);
    expect(limited[0]).toMatchObject({ service: 'platform', path: '/p1' });
    expect((await ctl.journal({ limit: 0 })).status).toBe(400);
    const unknown = await ctl.journal({ colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('colour');
  });

  it('only /_emulator/… is the control plane: a service path that merely starts alike is journaled', async () => {
    const r = await speech('/_emulatorx/y');
    expect(r.status).toBe(404);
    expect(r.body.base_resp.status_msg).toContain('/_emulatorx/y');
    expect((await ctl.journal()).body.entries.map((e: { path: string }) => e.path)).toEqual(['/_emulatorx/y']);
  });

  it('a refused key (disabled) is still named, redacted, and found by ?account=', async () => {
    const key = 'emulator-disabled-key';
    await platform('/refused', key);
    const r = await ctl.journal({ account: key });
    expect(r.body.entries.map((e: { path: string }) => e.path)).toEqual(['/refused']);
    expect(r.body.entries[0].account).toMatch(/^emul…[0-9a-f]{6}$/);
    expect(r.text).not.toContain(key);
  });

  it('is bounded by journalLimit, oldest dropped first', async () => {
    for (let i = 1; i <= 9; i++) await speech(`/n${i}`);
    const entries = (await ctl.journal()).body.entries;
    expect(entries.map((e: { path: string }) => e.path)).toEqual(['/n9', '/n8', '/n7', '/n6', '/n5', '/n4']);
  });

  it('DELETE clears it', async () => {
    await speech('/gone');
    expect((await ctl.clearJournal()).status).toBe(200);
    expect((await ctl.journal()).body.entries).toEqual([]);
  });

  it('never holds a full key: not in the journal, state view, accounts view or fault list', async () => {
    const key = 'sk-secret-never-shown-0123456789';
    await speech('/k', key);
    await platform('/k', key);
    await call(`${emu.platformUrl}/k?api_key=${key}`);
    await call(`${emu.platformUrl}/k`, { json: { apiKey: key, nested: { token: key } }, headers: { 'x-api-key': key } });
    await ctl.putAccount(key, { project: 'p1' });
    await ctl.addFault({ account: key, fault: { code: 1 } });
    const texts = [
      (await ctl.journal()).text,
      (await ctl.state()).text,
      (await ctl.account(key)).text,
      (await ctl.putAccount(key, { project: 'p2' })).text,
      (await ctl.faults()).text,
    ];
    for (const t of texts) {
      expect(t.length).toBeGreaterThan(10);
      expect(t).not.toContain(key);
      expect(t).not.toContain(key.slice(4));
    }
    expect((await ctl.journal({ account: key })).body.entries.length).toBeGreaterThanOrEqual(3);
  });
});

describe('accounts', () => {
  it('a key never configured answers the defaults: all capabilities, project default', async () => {
    const r = await ctl.account('sk-fresh-key-xyz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ project: 'default', disabled: false, limits: {} });
    expect(r.body.capabilities).toEqual(['tts', 'cloning', 'upload', 'podcast', 'calls', 'recognition', 'detection', 'diarization', 'agents']);
    expect(r.body.balance_micro).toBeGreaterThan(1e12);
    expect(r.body.free_call_seconds).toBe(0); // billing.json free pool
  });

  it('PUT sets the fields, GET answers them at the top level, partial PUT keeps the rest', async () => {
    const put = await ctl.putAccount(KEY_A, {
      balance_micro: 1234,
      free_call_seconds: 60,
      capabilities: ['tts', 'upload'],
      project: 'proj-x',
      disabled: false,
      limits: { requests_per_minute: 5, characters_per_minute: 900, max_concurrent_calls: 2, single_channel: true },
    });
    expect(put.status).toBe(200);
    const want = {
      balance_micro: 1234,
      free_call_seconds: 60,
      capabilities: ['tts', 'upload'],
      project: 'proj-x',
      disabled: false,
      limits: { requests_per_minute: 5, characters_per_minute: 900, max_concurrent_calls: 2, single_channel: true },
    };
    expect(put.body).toMatchObject(want);
    expect((await ctl.account(KEY_A)).body).toMatchObject(want);
    await ctl.putAccount(KEY_A, { balance_micro: 0, limits: { requests_per_minute: 7 } });
    const after = (await ctl.account(KEY_A)).body;
    expect(after).toMatchObject({ balance_micro: 0, project: 'proj-x', capabilities: ['tts', 'upload'] });
    expect(after.limits).toMatchObject({ requests_per_minute: 7, characters_per_minute: 900 });
    // the account the services see is the same one
    const resolved = emu.emulator.accounts.resolve(KEY_A);
    expect(resolved.ok && resolved.account.project).toBe('proj-x');
  });

  it('a long key (real keys are JWT-like, hundreds of characters) works as a path parameter', async () => {
    const key = `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.${'x'.repeat(600)}`;
    expect((await ctl.putAccount(key, { project: 'long' })).status).toBe(200);
    const r = await ctl.account(key);
    expect(r.status).toBe(200);
    expect(r.body.project).toBe('long');
    expect(r.text).not.toContain(key);
  });

  it('invalid PUT bodies answer 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ balance_micro: -1 }, 'balance_micro'],
      [{ balance_micro: 1.5 }, 'balance_micro'],
      [{ capabilities: ['flying'] }, 'capabilities'],
      [{ project: '' }, 'project'],
      [{ disabled: 'yes' }, 'disabled'],
      [{ limits: { requests_per_minute: 0 } }, 'requests_per_minute'],
      [{ limits: { burst: 1 } }, 'burst'],
      [{ nickname: 'x' }, 'nickname'],
    ];
    for (const [body, word] of cases) {
      const r = await ctl.putAccount(KEY_A, body as Record<string, unknown>);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toContain(word);
    }
    const notJson = await call(`${emu.speechUrl}/_emulator/accounts/${KEY_A}`, {
      method: 'PUT',
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toMatch(/JSON/);
  });

  it('a disabled key is an invalid key', async () => {
    expect(emu.emulator.accounts.resolve(KEY_A).ok).toBe(true);
    await ctl.putAccount(KEY_A, { disabled: true });
    expect(emu.emulator.accounts.resolve(KEY_A)).toEqual({ ok: false, problem: 'disabled' });
    await speech('/who', KEY_A);
    expect(emu.emulator.accounts.resolve(KEY_A).ok).toBe(false); // the journal names it, but it stays refused
    await ctl.putAccount(KEY_A, { disabled: false });
    expect(emu.emulator.accounts.resolve(KEY_A).ok).toBe(true);
  });

  it('global reset clears PUT settings', async () => {
    await ctl.putAccount(KEY_A, { project: 'temp', balance_micro: 5 });
    await ctl.reset();
    expect((await ctl.account(KEY_A)).body).toMatchObject({ project: 'default', disabled: false });
  });

  it('reset of one account leaves the other account untouched', async () => {
    const e = emu.emulator;
    await ctl.putAccount(KEY_A, { project: 'pa', balance_micro: 11 });
    await ctl.putAccount(KEY_B, { project: 'pb', balance_micro: 22 });
    await speech('/a1', KEY_A);
    await speech('/b1', KEY_B);
    await ctl.addFault({ account: KEY_A, path: '/fa', fault: { code: 1 } });
    await ctl.addFault({ account: KEY_B, path: '/fb', fault: { code: 1 } });
    const a = (e.accounts.resolve(KEY_A) as { account: Parameters<typeof e.windowKey>[0] }).account;
    const b = (e.accounts.resolve(KEY_B) as { account: Parameters<typeof e.windowKey>[0] }).account;
    e.clock.after(60_000, () => {}, 'a-timer', a.id);
    e.clock.after(60_000, () => {}, 'b-timer', b.id);
    e.limits.hit(e.windowKey(a, 'rpm'), 60_000, 1);
    e.limits.hit(e.windowKey(b, 'rpm'), 60_000, 1);
    const fresh = new Ids('t');
    const aFirst = fresh.stream(a.id).hex(8);
    const bFirst = fresh.stream(b.id).hex(8);
    e.ids.stream(a.id).hex(8);

    const r = await ctl.reset(KEY_A);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(KEY_A);

    expect((await ctl.account(KEY_A)).body).toMatchObject({ project: 'default' });
    expect((await ctl.account(KEY_B)).body).toMatchObject({ project: 'pb', balance_micro: 22 });
    expect((await ctl.journal({ account: KEY_A })).body.entries).toEqual([]);
    expect((await ctl.journal({ account: KEY_B })).body.entries.map((x: { path: string }) => x.path)).toEqual(['/b1']);
    expect((await ctl.faults()).body.rules.map((x: { path: string }) => x.path)).toEqual(['/fb']);
    expect(e.clock.pending().map((t) => t.label)).toEqual(['b-timer']);
    expect(e.limits.hit(e.windowKey(a, 'rpm'), 60_000, 1).allowed).toBe(true);
    expect(e.limits.hit(e.windowKey(b, 'rpm'), 60_000, 1).allowed).toBe(false);
    expect(e.ids.stream(a.id).hex(8)).toBe(aFirst); // A's id sequence starts over, B's goes on
    expect(e.ids.stream(b.id).hex(8)).not.toBe(bFirst);
  });

  it('state view lists accounts redacted with their timers', async () => {
    const e = emu.emulator;
    await speech('/s', KEY_A);
    const a = (e.accounts.resolve(KEY_A) as { account: { id: string; label: string } }).account;
    e.clock.after(5_000, () => {}, 'session-timeout', a.id);
    const s = await ctl.state();
    expect(s.status).toBe(200);
    const mine = s.body.accounts.find((x: { account: string }) => x.account === a.label);
    expect(mine.pending_timers).toEqual([{ label: 'session-timeout', due_ms: expect.any(Number) }]);
    expect(mine.open_websockets).toEqual([]);
    expect(s.body.totals.pending_timers).toBe(1);
  });
});

describe('areas and sockets follow reset and the state view', () => {
  it("an area is reset per account and shown per account; a reset closes only that account's sockets", async () => {
    const e = emu.emulator;
    const a = (e.accounts.resolve(KEY_A) as { account: { id: string; label: string } }).account;
    const b = (e.accounts.resolve(KEY_B) as { account: { id: string; label: string } }).account;
    const store = new Map<string, string[]>([
      [a.id, ['voice-a']],
      [b.id, ['voice-b']],
    ]);
    const resets: (string | undefined)[] = [];
    e.registerArea({
      name: 'probe_voices',
      reset: (id) => {
        resets.push(id);
        if (id === undefined) store.clear();
        else store.delete(id);
      },
      view: (id) => store.get(id) ?? [],
    });
    const closed: [string, number][] = [];
    e.sockets.add({ accountId: a.id, path: '/ws/a', openedAtMs: e.clock.now(), close: (code) => closed.push(['a', code]) });
    e.sockets.add({ accountId: b.id, path: `/ws/b?api_key=${KEY_B}`, openedAtMs: e.clock.now(), close: (code) => closed.push(['b', code]) });

    const state = await ctl.state();
    expect(state.text).not.toContain(KEY_B);
    const before = state.body.accounts.find((x: { account: string }) => x.account === b.label);
    expect(before.resources.probe_voices).toEqual(['voice-b']);
    expect(before.open_websockets).toEqual([{ path: '/ws/b', opened_at_ms: expect.any(Number), buffered_bytes: expect.any(Number) }]);

    await ctl.reset(KEY_A);
    expect(resets).toEqual([a.id]);
    expect([...store.keys()]).toEqual([b.id]);
    expect(closed).toEqual([['a', 1012]]);
    const after = (await ctl.state()).body;
    expect(after.totals.open_websockets).toBe(1);

    await ctl.reset();
    expect(resets).toEqual([a.id, undefined]);
    expect(closed).toEqual([
      ['a', 1012],
      ['b', 1012],
    ]);
    e.areas.delete('probe_voices');
  });
});

describe('journal frames', () => {
  it('a WebSocket entry keeps the first and last frames (FRAME_HEAD, FRAME_TAIL), the total, and text contents within the bounds', () => {
    const entry = emu.emulator.journal.start({
      at_ms: 0,
      service: 'platform',
      method: 'GET',
      path: '/ws',
      account: null,
      request: { headers: {} },
      response: {},
    });
    const journal = emu.emulator.journal;
    const n = FRAME_HEAD + FRAME_TAIL + 30;
    for (let i = 0; i < n; i++) journal.recordFrame(entry, { dir: 'in', type: 'text', size: i, at_ms: i }, { i, audio: 'ab'.repeat(i) });
    expect(entry.ws_frames_total).toBe(n);
    expect(entry.ws_frames!.map((f) => f.size)).toEqual([...Array(FRAME_HEAD).keys(), ...Array.from({ length: FRAME_TAIL }, (_, i) => FRAME_HEAD + 30 + i)]);
    // audio fields are kept as their size; a frame over the per-frame bound is summarized and marked
    expect(entry.ws_frames![3]!.content).toEqual({ i: 3, audio: { chars: 6 } });
    journal.recordFrame(
      entry,
      { dir: 'out', type: 'text', size: 9000, at_ms: 0 },
      {
        text: 'x'
          .repeat(900)
          .split('')
          .map(() => 'word'),
      },
    );
    expect(entry.ws_frames!.at(-1)).toMatchObject({ truncated: true });
    expect(JSON.stringify(entry.ws_frames!.at(-1)!.content).length).toBeLessThan(4096);
  });
});

describe('rate windows on the emulator clock', () => {
  it('a full window reopens exactly when the clock moves past it', async () => {
    await ctl.freeze();
    const l = emu.emulator.limits;
    expect(l.hit('g:w', 1_000, 2).allowed).toBe(true);
    await ctl.advance(400);
    expect(l.hit('g:w', 1_000, 2).allowed).toBe(true);
    const denied = l.hit('g:w', 1_000, 2);
    expect(denied).toEqual({ allowed: false, retryAfterMs: 600 });
    await ctl.advance(599);
    expect(l.hit('g:w', 1_000, 2).allowed).toBe(false);
    await ctl.advance(1);
    expect(l.hit('g:w', 1_000, 2).allowed).toBe(true);
  });
});
