import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../../helpers/emulator.js';
import { claims, nonce, sessionClient, sessionsForFile } from './calls-helpers.js';

const { c, emu } = sessionsForFile();

const start = (key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  c.post('/v1/audio/assistant/start', { client_nonce: nonce(), ...body }, key, headers);
const beat = (key: string, session_id: string, headers: Record<string, string> = {}) => c.post('/v1/audio/assistant/heartbeat', { session_id }, key, headers);
const stop = (key: string, session_id: string, reason?: string) => c.post('/v1/audio/assistant/stop', { session_id, ...(reason ? { reason } : {}) }, key);
const callsOf = async (key: string) => (await c.stateOf(key)).resources.calls as any[];

describe('start', () => {
  it('answers the room credentials: a LiveKit-shaped token for the identity and room, valid 2 hours', async () => {
    const now = (await c.ctl.clock()).body.now_ms as number;
    const r = await start('calls-a', { timbre: 'english_tutor', language: 'en', sample_rate: 16000 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 0, error_message: '', succeed: true });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['bot_identity', 'expire_at', 'identity', 'room_name', 'rtc_url', 'session_id', 'token'].sort());
    // The room server is the platform listener itself.
    expect(d.rtc_url).toBe(emu.platformUrl.replace('http', 'ws'));
    expect(d.expire_at).toBe(Math.floor(now / 1000) + 7200);
    const t = claims(d.token);
    expect(t).toMatchObject({ iss: 'devkey', sub: d.identity, nbf: Math.floor(now / 1000), exp: d.expire_at });
    expect(t.video).toEqual({ room: d.room_name, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: true });
    expect(d.bot_identity).not.toBe(d.identity);
    const [s] = await callsOf('calls-a');
    expect(s).toMatchObject({ session_id: d.session_id, state: 'active', timbre: 'english_tutor', language: 'en' });
  });

  it('defaults timbre to `default` and language to zh; concurrent calls each get their own room', async () => {
    const a = (await start('calls-b')).body.data;
    const b = (await start('calls-b')).body.data;
    expect(a.room_name).not.toBe(b.room_name);
    const calls = await callsOf('calls-b');
    expect(calls.map((x) => [x.timbre, x.language])).toEqual([
      ['default', 'zh'],
      ['default', 'zh'],
    ]);
  });

  it.each([
    [{ client_nonce: undefined }, 'client_nonce'],
    [{ client_nonce: 'not-a-uuid' }, 'client_nonce'],
    [{ language: 'fr' }, 'language'],
    [{ timbre: 'no_such_role' }, 'timbre'],
    [{ sample_rate: 12345 }, 'sample_rate'],
    [{ previous_session_id: 'unknown-session' }, 'previous_session_id'],
  ])('rejects %j with 20003 naming the field', async (body, field) => {
    const r = await start('calls-c', body);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 20003, succeed: false, data: null });
    expect(r.body.error_message).toContain(field);
  });

  it('answers 20003 for a body that is not JSON, 20001 without a key, 50000 on a fault', async () => {
    const bad = await c.send('POST', '/v1/audio/assistant/start', 'calls-c', { 'content-type': 'application/json' });
    expect(bad.body.error_code).toBe(20003);
    const r = await c.post('/v1/audio/assistant/start', { client_nonce: '{' }, null);
    expect(r.body).toMatchObject({ error_code: 20001, succeed: false });
    expect((await start('calls-c', {}, { 'x-emulator-fault': 'code=50000' })).body.error_code).toBe(50000);
    expect((await c.post('/v1/audio/assistant/heartbeat', {}, 'calls-c')).body.error_code).toBe(20003);
    expect((await beat('calls-c', 'nope')).body.error_code).toBe(20003);
    expect((await c.post('/v1/audio/assistant/stop', { session_id: '' }, 'calls-c')).body.error_code).toBe(20003);
  });
});

describe('nonce window (30 s on the emulator clock)', () => {
  it('returns the same session at 29 s and a new one at 31 s; nonces are per key', async () => {
    const n = nonce();
    const first = (await start('calls-n', { client_nonce: n })).body.data;
    await c.ctl.advance(29_000);
    await beat('calls-n', first.session_id);
    const again = (await start('calls-n', { client_nonce: n })).body.data;
    expect(again).toEqual(first);
    expect((await start('calls-n2', { client_nonce: n })).body.data.session_id).not.toBe(first.session_id);
    await c.ctl.advance(2_000);
    const later = (await start('calls-n', { client_nonce: n })).body.data;
    expect(later.session_id).not.toBe(first.session_id);
    expect((await callsOf('calls-n')).length).toBe(2);
  });
});

describe('heartbeat timeout and billing', () => {
  it('ends the call at the last heartbeat + 30 s, billed exactly up to then; stop returns it, charged once', async () => {
    const key = 'calls-t';
    await c.ctl.putAccount(key, { balance_micro: 1_000_000 });
    const id = (await start(key)).body.data.session_id;
    await c.ctl.advance(10_000);
    expect((await beat(key, id)).body.data).toEqual({ should_close: false, remaining_seconds: 490, elapsed_seconds: 10 });
    await c.ctl.advance(30_000);
    expect((await callsOf(key))[0].state).toBe('active'); // exactly 30 s is not "more than 30 s"
    const pending = (await c.stateOf(key)).pending_timers;
    expect(pending.some((t) => t.label.includes('heartbeat timeout'))).toBe(true);
    await c.ctl.advance(1);
    const s = await c.stateOf(key);
    expect(s.resources.calls[0]).toMatchObject({ state: 'ended', end_reason: 'heartbeat_timeout', billed_sec: 40, billed_micro: 80_000 });
    expect(s.pending_timers).toEqual([]);
    expect(await c.balance(key)).toBe(920_000);

    await c.ctl.advance(60_000);
    expect((await beat(key, id)).body.data).toEqual({ should_close: true, remaining_seconds: 460, elapsed_seconds: 40 });
    const first = await stop(key, id, 'tab_closed');
    expect(first.body).toEqual({ error_code: 0, error_message: '', succeed: true, data: { total_sec: 40, total_billed: 80_000 } });
    expect((await stop(key, id)).body.data).toEqual({ total_sec: 40, total_billed: 80_000 });
    expect(await c.balance(key)).toBe(920_000);
    const entry = (await c.ctl.journal({ path: '/v1/audio/assistant/stop', limit: 2 })).body.entries.find((e: any) => e.note);
    expect(entry.note).toBe('stop reason: tab_closed');
  });

  it('stop settles a running call and repeating it charges nothing more', async () => {
    const key = 'calls-s';
    await c.ctl.putAccount(key, { balance_micro: 1_000_000 });
    const id = (await start(key)).body.data.session_id;
    await c.ctl.advance(2_500);
    const r = await stop(key, id, 'user_stop');
    expect(r.body.data).toEqual({ total_sec: 2.5, total_billed: 5_000 });
    await c.ctl.advance(5_000);
    expect((await stop(key, id)).body.data).toEqual({ total_sec: 2.5, total_billed: 5_000 });
    expect(await c.balance(key)).toBe(995_000);
    expect((await beat(key, id)).body.data.should_close).toBe(true);
    expect((await c.stateOf(key)).pending_timers).toEqual([]);
  });

  it('refuses to start without balance (40011) and closes a call when the balance runs out', async () => {
    const key = 'calls-m';
    await c.ctl.putAccount(key, { balance_micro: 1_999 });
    expect((await start(key)).body).toMatchObject({ error_code: 40011, succeed: false });
    await c.ctl.putAccount(key, { balance_micro: 10_000 }); // 5 seconds at 2,000 a second
    const id = (await start(key)).body.data.session_id;
    await c.ctl.advance(3_000);
    expect((await beat(key, id)).body.data).toEqual({ should_close: false, remaining_seconds: 2, elapsed_seconds: 3 });
    await c.ctl.advance(2_000);
    expect((await callsOf(key))[0]).toMatchObject({ state: 'ended', end_reason: 'balance_exhausted' });
    await c.ctl.advance(1_000);
    expect((await beat(key, id)).body.data).toEqual({ should_close: true, remaining_seconds: 0, elapsed_seconds: 5 });
    expect((await stop(key, id)).body.data).toEqual({ total_sec: 5, total_billed: 10_000 });
    expect(await c.balance(key)).toBe(0);
  });

  it('counts the free pool in remaining_seconds and bills it as 0', async () => {
    const key = 'calls-f';
    await c.ctl.putAccount(key, { balance_micro: 100_000, free_call_seconds: 3 });
    const id = (await start(key)).body.data.session_id;
    expect((await beat(key, id)).body.data.remaining_seconds).toBe(53);
    await c.ctl.advance(10_000);
    expect((await stop(key, id)).body.data).toEqual({ total_sec: 10, total_billed: 14_000 });
    expect(await c.balance(key)).toBe(86_000);
  });

  it('concurrent calls share the free pool equally and run out of balance together', async () => {
    const key = 'calls-cc';
    await c.ctl.putAccount(key, { balance_micro: 8_000, free_call_seconds: 4 });
    const a = (await start(key)).body.data.session_id;
    const b = (await start(key)).body.data.session_id;
    await c.ctl.advance(3_000); // 6 call-seconds: 4 free (2 each), 2 paid (4,000)
    expect((await beat(key, a)).body.data).toEqual({ should_close: false, remaining_seconds: 2, elapsed_seconds: 3 });
    await c.ctl.advance(2_000); // the last 4,000 pay 1 more second each: both end at 4 s
    expect((await callsOf(key)).map((x) => [x.state, x.end_reason, x.billed_sec])).toEqual([
      ['ended', 'balance_exhausted', 4],
      ['ended', 'balance_exhausted', 4],
    ]);
    expect((await stop(key, a)).body.data).toEqual({ total_sec: 4, total_billed: 4_000 });
    expect((await stop(key, b)).body.data).toEqual({ total_sec: 4, total_billed: 4_000 });
    expect(await c.balance(key)).toBe(0);
  });

  it('a close_ws fault on a heartbeat stands for an abnormal end: should_close true', async () => {
    const key = 'calls-x';
    const id = (await start(key)).body.data.session_id;
    await c.ctl.advance(1_000);
    expect((await beat(key, id, { 'x-emulator-fault': 'close_ws=1011' })).body.data).toMatchObject({ should_close: true, elapsed_seconds: 1 });
    expect((await callsOf(key))[0].end_reason).toBe('abnormal');
  });
});

describe('limits of the account', () => {
  it('40013 when max_concurrent_calls are running; a stop frees a place', async () => {
    const key = 'calls-l';
    await c.ctl.putAccount(key, { limits: { max_concurrent_calls: 2 } });
    const a = (await start(key)).body.data.session_id;
    expect((await start(key)).body.error_code).toBe(0);
    const third = await start(key);
    expect(third.body).toMatchObject({ error_code: 40013, succeed: false });
    expect(third.body.error_message).toContain('2');
    await stop(key, a);
    expect((await start(key)).body.error_code).toBe(0);
  });

  it('40012 for a single-channel key while a call is in progress; a timed-out call frees it', async () => {
    const key = 'calls-1';
    await c.ctl.putAccount(key, { limits: { single_channel: true } });
    const a = (await start(key)).body.data.session_id;
    expect((await start(key)).body).toMatchObject({ error_code: 40012, succeed: false });
    await c.ctl.advance(30_001);
    const b = await start(key);
    expect(b.body.error_code).toBe(0);
    expect(b.body.data.session_id).not.toBe(a);
  });
});

describe('previous_session_id', () => {
  it('resumes an earlier call of the same key: the running one ends, its context is carried', async () => {
    const key = 'calls-p';
    await c.ctl.putAccount(key, { limits: { single_channel: true } });
    const old = (await start(key)).body.data.session_id;
    expect((await start('calls-p-other', { previous_session_id: old })).body.error_code).toBe(20003);
    await c.ctl.advance(4_000);
    const r = await start(key, { previous_session_id: old });
    expect(r.body.error_code).toBe(0);
    expect((await beat(key, old)).body.data).toMatchObject({ should_close: true, elapsed_seconds: 4 });
    const calls = await callsOf(key);
    expect(calls.find((x) => x.session_id === old)).toMatchObject({ state: 'ended', end_reason: 'resumed' });
    expect(calls.find((x) => x.session_id === r.body.data.session_id)).toMatchObject({ state: 'active', previous_session_id: old });
  });
});

describe('persistence', () => {
  // A restart on one data dir: two emulators of its own, one after the other.
  it('rebuilds a pending heartbeat deadline from the snapshot', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'calls-'));
    const first = await startTestEmulator({ dataDir });
    const id = (await sessionClient(first).post('/v1/audio/assistant/start', { client_nonce: nonce() }, 'calls-d')).body.data.session_id;
    await first.close();
    const second = await startTestEmulator({ dataDir });
    try {
      const c2 = sessionClient(second);
      const s = await c2.stateOf('calls-d');
      expect(s.resources.calls[0]).toMatchObject({ session_id: id, state: 'active' });
      expect(s.pending_timers.map((t) => t.label)).toEqual([`call heartbeat timeout ${id}`]);
      await c2.ctl.freeze(true);
      await c2.ctl.advance(31_000);
      expect((await c2.stateOf('calls-d')).resources.calls[0].state).toBe('ended');
    } finally {
      await second.close();
    }
  });
});

describe('determinism and reset', () => {
  it('same seed, same clock and same requests give the same ids and token', async () => {
    const key = 'calls-det';
    const at = (await c.ctl.clock()).body.now_ms as number;
    const n = nonce();
    const first = (await start(key, { client_nonce: n })).body.data;
    await c.ctl.reset(key);
    await c.ctl.setClock({ set_ms: at });
    const again = (await start(key, { client_nonce: n })).body.data;
    expect(again).toEqual(first);
  });

  it('a reset of the account drops its calls and their timers', async () => {
    const key = 'calls-r';
    await start(key);
    expect((await c.stateOf(key)).pending_timers.length).toBe(1);
    await c.ctl.reset(key);
    // A reset account may be gone from the state view altogether: then it holds nothing either.
    const label = (await c.ctl.account(key)).body.account as string;
    const s = ((await c.ctl.state()).body.accounts as { account: string; resources: { calls: unknown[] }; pending_timers: unknown[] }[]).find(
      (a) => a.account === label,
    );
    expect(s?.resources.calls ?? []).toEqual([]);
    expect(s?.pending_timers ?? []).toEqual([]);
  });

  it('a key without the calls capability gets 20001', async () => {
    const r = await start('emulator-tts-only-key');
    expect(r.body).toMatchObject({ error_code: 20001, succeed: false });
    expect(r.body.error_message).toContain('calls');
  });
});
