import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient, ControlClientError, VerificationError } from '../../src/client/index.js';
import type { RunningEmulator } from '../../src/index.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';

describe('control client on the in-process handle (emu.control)', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.close());

  it('reads health and readiness, and the documents and metrics', async () => {
    const health = await emu.control.health();
    expect(health).toMatchObject({ status: 'ok', ready: true, services: { speech: emu.speechUrl, platform: emu.platformUrl } });
    expect(await emu.control.ready()).toBe(true);
    await emu.control.waitUntilReady({ timeoutMs: 2000 });
    expect((await emu.control.openApi('control')).openapi).toBe('3.1.0');
    expect((await emu.control.asyncApi()).asyncapi).toBe('3.0.0');
    expect(await emu.control.metrics()).toMatch(/^# (HELP|TYPE) /m);
  });

  it('moves the clock: freeze, set, advance, read, unfreeze', async () => {
    const frozen = await emu.control.clock.freeze();
    expect(frozen.frozen).toBe(true);
    expect(await emu.control.clock.set(1_700_000_000_000)).toEqual({ now_ms: 1_700_000_000_000, frozen: true });
    expect(await emu.control.clock.advance(2500)).toEqual({ now_ms: 1_700_000_002_500, frozen: true });
    expect(await emu.control.clock.read()).toEqual({ now_ms: 1_700_000_002_500, frozen: true });
    expect((await emu.control.clock.unfreeze()).frozen).toBe(false);
    // A refused change throws with the control plane's own message naming the field.
    const err = await emu.control.clock.change({ advance_ms: -1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ControlClientError);
    expect(err).toMatchObject({ status: 400, request: 'POST /_emulator/clock' });
    expect((err as ControlClientError).detail).toMatch(/^clock field advance_ms: /);
    expect((err as ControlClientError).body).toEqual({ error: { message: (err as ControlClientError).detail } });
  });

  it('sets and reads an account, whose settings the service then applies', async () => {
    const put = await emu.control.accounts.put('client-poor', { balance_micro: 0, limits: { requests_per_minute: 5 } });
    expect(put).toMatchObject({ balance_micro: 0, limits: { requests_per_minute: 5 }, real_name_verified: true });
    expect(put.account).not.toContain('client-poor');
    expect(await emu.control.accounts.get('client-poor')).toEqual(put);
    // No balance: the speech service refuses with its own code.
    const r = await t2a(emu.speechUrl, req(), { key: 'client-poor' });
    expect(r.body.base_resp.status_code).toBe(1008);
  });

  it('adds, lists, removes and clears fault rules; the fault reaches the service', async () => {
    const added = await emu.control.faults.add({ path: '/v1/t2a_v2', account: 'client-faulty', fault: { code: 1002 } });
    expect(added.rule).toMatchObject({ id: added.id, path: '/v1/t2a_v2', times: 1, remaining: 1, fault: { code: 1002 } });
    const other = await emu.control.faults.add({ path: '/v1/none', times: 'always', fault: { status: 503 } });
    expect((await emu.control.faults.list()).map((r) => r.id)).toEqual([added.id, other.id]);
    expect(await emu.control.faults.remove(other.id)).toEqual({ deleted: other.id });
    expect((await t2a(emu.speechUrl, req(), { key: 'client-faulty' })).body.base_resp.status_code).toBe(1002);
    expect(await emu.control.faults.list()).toEqual([]);
    await emu.control.faults.add({ fault: { delay_ms: 1 } });
    expect(await emu.control.faults.clear()).toEqual({ deleted: 'all' });
    expect(await emu.control.faults.list()).toEqual([]);
    const missing = await emu.control.faults.remove('nope').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, detail: 'no fault rule nope' });
  });

  it('lists the journal with its filters, reads one entry and its audio, verifies, clears', async () => {
    await emu.control.journal.clear();
    const ok = await t2a(emu.speechUrl, req({}, 'Journal me.'), { key: 'client-journal' });
    expect(ok.body.base_resp.status_code).toBe(0);
    await t2a(emu.speechUrl, req(), { key: 'client-other' });

    const mine = await emu.control.journal.list({ account: 'client-journal' });
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ service: 'speech', method: 'POST', path: '/v1/t2a_v2', status: 200 });
    expect(await emu.control.journal.list({ path: '/v1/t2a_v2', limit: 1 })).toHaveLength(1);
    expect(await emu.control.journal.list({ path: '/v1/nothing' })).toEqual([]);
    const entry = await emu.control.journal.get(mine[0]!.id);
    expect(entry.request.body).toMatchObject({ text: 'Journal me.' });

    // The answer's hex audio, served again: it decodes as the answer said.
    const audio = await emu.control.journal.answerAudio(entry.id);
    expect(audio.contentType).toBe('audio/mpeg');
    const probe = await ffprobe(Buffer.from(audio.bytes), { ext: 'mp3' });
    expect(probe.sampleRate).toBe(ok.body.extra_info.audio_sample_rate);
    expect(probe.durationMs).toBeGreaterThan(0.8 * ok.body.extra_info.audio_length);
    const noClientAudio = await emu.control.journal.clientAudio(entry.id).catch((e: unknown) => e);
    expect(noClientAudio).toMatchObject({ status: 404 });

    expect(await emu.control.verify({ request: { path: '/v1/t2a_v2', account: 'client-journal', code: 0 }, exactly: 1 })).toEqual({
      ok: true,
      count: 1,
      expected: 'exactly 1',
    });
    const miss = await emu.control.verify({ request: { path: '/v1/t2a_v2', account: 'client-journal' }, exactly: 3 }).catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(VerificationError);
    const failure = miss as VerificationError;
    expect(failure).toMatchObject({ status: 409, count: 1, expected: 'exactly 3' });
    expect(failure.detail).toBe('expected exactly 3 matching requests, found 1');
    expect(failure.nearMisses.length).toBeGreaterThan(0);
    expect(failure.nearMisses[0]!.entry.path).toBe('/v1/t2a_v2');

    expect(await emu.control.journal.clear()).toEqual({ deleted: 'all' });
    expect(await emu.control.journal.list()).toEqual([]);
    expect(await emu.control.journal.get(entry.id).catch((e: unknown) => (e as ControlClientError).status)).toBe(404);
  });

  it('lists and verifies by listener, headers, query, fault and a clock window', async () => {
    await emu.control.journal.clear();
    await t2a(emu.speechBackupUrl, req({}, 'Via the backup.'), {
      key: 'client-filters',
      headers: { 'X-Emulator-Fault': 'code=1002', 'X-Request-Id': 'r-1' },
      query: '?GroupId=g7',
    });
    await t2a(emu.speechUrl, req({}, 'Via the primary.'), { key: 'client-filters' });
    const [entry] = await emu.control.journal.list({ listener: 'speech-backup', header: { 'x-request-id': 'r-1' }, query: { GroupId: 'g7' }, fault: true });
    expect(entry).toMatchObject({ listener: 'speech-backup', fault: { origin: 'header', code: 1002 }, request: { body: { text: 'Via the backup.' } } });
    expect(await emu.control.journal.list({ fault: false, since_ms: entry!.at_ms, code: '0' })).toHaveLength(1);
    expect(
      await emu.control.verify({
        request: {
          listener: 'speech-backup',
          headers: { 'X-Request-Id': 'r-1' },
          query: { GroupId: 'g7' },
          fault: true,
          code: 1002,
          until_ms: entry!.at_ms + 1,
        },
        exactly: 1,
      }),
    ).toMatchObject({ ok: true, count: 1 });
  });

  it('verifies by spec code an answer too large to summarize (its code is kept beside the summary)', async () => {
    const long = await t2a(emu.speechUrl, req({}, 'A sentence long enough that its answer is too large to summarize. '.repeat(3)), { key: 'client-long' });
    expect(long.body.base_resp.status_code).toBe(0);
    const [entry] = await emu.control.journal.list({ account: 'client-long' });
    expect(entry!.response).toMatchObject({ code: 0, summary: { bytes: long.bytes.length } });
    expect(await emu.control.verify({ request: { account: 'client-long', code: 0 }, exactly: 1 })).toMatchObject({ ok: true, count: 1 });
  });

  it('reads the state, resets one account, and everything', async () => {
    await emu.control.accounts.put('client-state', { project: 'p1' });
    const state = await emu.control.state();
    expect(state.totals.journal_entries).toBeGreaterThanOrEqual(0);
    expect(state.accounts.some((a) => a.project === 'p1' && Array.isArray(a.open_websockets))).toBe(true);
    const one = await emu.control.resetAccount('client-state');
    expect(one.reset).toBe('account');
    expect(one.account).not.toContain('client-state');
    expect(await emu.control.reset()).toEqual({ reset: 'all' });
  });

  it('lists, reads and replaces fixtures; reset with fixtures restores them', async () => {
    const all = await emu.control.fixtures.list();
    expect(all.map((f) => f.name)).toContain('content-safety.json');
    const safety = await emu.control.fixtures.get('content-safety.json');
    const put = await emu.control.fixtures.put('content-safety.json', { terms: ['forbiddenword'] });
    expect(put).toEqual({ name: 'content-safety.json', source: 'run time', content: { terms: ['forbiddenword'] } });
    const refused = await emu.control.fixtures.put('content-safety.json', { terms: 'no' } as never).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as ControlClientError).detail).toMatch(/^fixture content-safety.json: .*terms/);
    expect(await emu.control.reset({ fixtures: true })).toEqual({ reset: 'all', fixtures_restored: ['content-safety.json'] });
    expect(await emu.control.fixtures.get('content-safety.json')).toEqual(safety);
  });
});

describe('control client by URL, against an emulator with a control token', () => {
  let emu: RunningEmulator;
  const token = 'client-token';
  beforeAll(async () => {
    emu = await startTestEmulator({ controlToken: token });
  });
  afterAll(() => emu?.close());

  it('works on any listener with the token; without it, a 401 error names the header', async () => {
    for (const url of [emu.platformUrl, `${emu.speechBackupUrl}/`]) {
      const client = new ControlClient({ url, token });
      expect((await client.health()).services?.platform).toBe(emu.platformUrl);
      expect((await client.clock.freeze()).frozen).toBe(true);
      expect((await client.clock.unfreeze()).frozen).toBe(false);
    }
    // The handle's client carries the token it was started with.
    expect((await emu.control.state()).totals).toBeDefined();

    const anonymous = new ControlClient({ url: emu.speechUrl });
    expect((await anonymous.health()).services).toBeUndefined();
    const err = await anonymous.state().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ControlClientError);
    expect(err).toMatchObject({ status: 401, request: 'GET /_emulator/state' });
    expect((err as Error).message).toBe('GET /_emulator/state: 401 control plane needs Authorization: Bearer <EMULATOR_CONTROL_TOKEN>');
    const wrong = await new ControlClient({ url: emu.speechUrl, token: 'nope' }).reset().catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401 });
  });

  it('refuses a URL that is not http(s), and reports an emulator that never became ready', async () => {
    expect(() => new ControlClient({ url: 'localhost:8900' })).toThrow(/url must be an http\(s\) URL/);
    const nowhere = new ControlClient({ url: 'http://127.0.0.1:9' });
    await expect(nowhere.waitUntilReady({ timeoutMs: 300, intervalMs: 50 })).rejects.toThrow(/was not ready within 300 ms/);
  });
});
