import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { claims, sessionClient } from './calls/calls-helpers.js';
import { joinAndLeave } from './room-signal-helpers.js';

const { emu } = emulatorForFile({ freeze: true });
let c: ReturnType<typeof sessionClient>;
const BASE = '/api/v1/agents/openapi/sessions';

beforeAll(() => {
  c = sessionClient(emu);
});

let n = 0;
const create = (key: string | null, body: Record<string, unknown> = { agentId: 'agent_demo' }, idem: string | null = `idem-${++n}`) =>
  c.post(`${BASE}/create`, body, key, idem ? { 'idempotency-key': idem } : {});
/** Creates a session and joins its room (signalling only): the session is in_call from that moment. */
const createJoined = async (key: string) => {
  const item = (await create(key)).body.data.item;
  await joinAndLeave(item.wsUrl, item.userToken);
  return item.sessionId as string;
};
const q = (id: string) => `?session_id=${encodeURIComponent(id)}`;
const beat = (key: string, id: string, headers: Record<string, string> = {}) => c.send('POST', `${BASE}/heartbeat${q(id)}`, key, headers);
const check = (key: string, id: string, headers: Record<string, string> = {}) => c.send('GET', `${BASE}/check${q(id)}`, key, headers);
const end = (key: string, id: string) => c.send('DELETE', `${BASE}/end${q(id)}`, key, { 'content-type': 'application/json' });
const sessionsOf = async (key: string) => (await c.stateOf(key)).resources.agent_sessions as any[];

describe('create', () => {
  it('answers data.item with a LiveKit-shaped userToken expiring at expireAt, status connecting', async () => {
    const now = (await c.ctl.clock()).body.now_ms as number;
    const r = await create('agents-a');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 0, succeed: true });
    const item = r.body.data.item;
    expect(Object.keys(item).sort()).toEqual(['agentId', 'expireAt', 'roomName', 'sessionId', 'status', 'userToken', 'wsUrl']);
    expect(item).toMatchObject({
      agentId: 'agent_demo',
      status: 'connecting',
      wsUrl: emu.platformUrl.replace('http', 'ws'),
      expireAt: Math.floor(now / 1000) + 7200,
    });
    const t = claims(item.userToken);
    expect(t).toMatchObject({ iss: 'devkey', exp: item.expireAt, video: { room: item.roomName, roomJoin: true } });
    expect(t.sub).toMatch(/^eu:/);
    const [s] = await sessionsOf('agents-a');
    expect(s).toMatchObject({ session_id: item.sessionId, status: 'connecting', user_identifier: t.sub });
    expect(s.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('keeps the caller userIdentifier and traceId', async () => {
    const item = (await create('agents-b', { agentId: 'agent_support', userIdentifier: 'eu:42', traceId: 'trace-1' })).body.data.item;
    expect(claims(item.userToken).sub).toBe('eu:42');
    expect((await sessionsOf('agents-b'))[0]).toMatchObject({ user_identifier: 'eu:42', trace_id: 'trace-1' });
  });

  it('the same Idempotency-Key (or body clientRequestId) returns the same session', async () => {
    const a = (await create('agents-i', { agentId: 'agent_demo' }, 'k-1')).body.data.item;
    const b = (await create('agents-i', { agentId: 'agent_demo' }, 'k-1')).body.data.item;
    expect(b).toEqual(a);
    const x = (await create('agents-i', { agentId: 'agent_demo', clientRequestId: 'k-2' }, null)).body.data.item;
    const y = (await create('agents-i', { agentId: 'agent_demo', clientRequestId: 'k-2' }, null)).body.data.item;
    expect(y.sessionId).toBe(x.sessionId);
    expect(x.sessionId).not.toBe(a.sessionId);
    expect((await create('agents-i', { agentId: 'agent_support' }, 'k-1')).body.error_code).toBe(10001);
    expect((await sessionsOf('agents-i')).length).toBe(2);
  });

  it.each([
    ['no idempotency key', 'agents-e', { agentId: 'agent_demo' }, null, 10001, 'Idempotency-Key'],
    ['empty agentId', 'agents-e', { agentId: '' }, 'e1', 10001, 'agentId'],
    ['missing agentId', 'agents-e', {}, 'e2', 10001, 'agentId'],
    ['unknown agent', 'agents-e', { agentId: 'agent_nope' }, 'e3', 10002, 'agent_nope'],
    ['unpublished agent', 'agents-e', { agentId: 'agent_draft' }, 'e4', 10002, 'agent_draft'],
    ["another project's agent", 'agents-e', { agentId: 'agent_foreign' }, 'e5', 10004, 'project'],
    ['a key of another project', 'emulator-other-project-key', { agentId: 'agent_demo' }, 'e6', 10004, 'project'],
    ['a key without the agents capability', 'emulator-tts-only-key', { agentId: 'agent_demo' }, 'e7', 10004, 'agents'],
    ['no key', null, { agentId: 'agent_demo' }, 'e8', 10003, 'X-API-Key'],
  ])('%s → %i', async (_what, key, body, idem, code, word) => {
    const r = await create(key, body, idem);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: code, succeed: false, data: null });
    expect(r.body.error_message).toContain(word);
  });

  it('20003 without balance, 10014 at the connection limit', async () => {
    await c.ctl.putAccount('agents-m', { balance_micro: 0 });
    expect((await create('agents-m')).body.error_code).toBe(20003);
    await c.ctl.putAccount('agents-m', { balance_micro: 1_000_000, limits: { max_concurrent_calls: 1 } });
    const id = (await create('agents-m')).body.data.item.sessionId;
    expect((await create('agents-m')).body).toMatchObject({ error_code: 10014, succeed: false });
    await end('agents-m', id);
    expect((await create('agents-m')).body.error_code).toBe(0);
  });
});

describe('state machine', () => {
  it('connecting (heartbeats included) → in_call when the user joins the room → ended by end (idempotent), billed for in-call time', async () => {
    const key = 'agents-s';
    await c.ctl.putAccount(key, { balance_micro: 1_000_000 });
    const item = (await create(key)).body.data.item;
    const id = item.sessionId;
    const chk = (await check(key, id)).body.data.item;
    expect(chk).toEqual({ sessionId: id, status: 'connecting', shouldClose: false, closeReason: '', expireAt: chk.expireAt, agentId: 'agent_demo' });
    await c.ctl.advance(3_000); // connecting time is not billed
    // A heartbeat keeps the session alive; it is not the join.
    expect((await beat(key, id)).body.data.item).toEqual({ sessionId: id, status: 'connecting', shouldClose: false, closeReason: '', remainingSeconds: 500 });
    await joinAndLeave(item.wsUrl, item.userToken);
    expect((await beat(key, id)).body.data.item).toEqual({ sessionId: id, status: 'in_call', shouldClose: false, closeReason: '', remainingSeconds: 500 });
    await c.ctl.advance(5_000);
    expect((await beat(key, id)).body.data.item).toMatchObject({ status: 'in_call', remainingSeconds: 495 });
    const e = await end(key, id);
    expect(e.body).toEqual({ error_code: 0, error_message: '', succeed: true, data: { item: { sessionId: id, status: 'ended', shouldClose: true } } });
    expect((await end(key, id)).body.data.item).toEqual({ sessionId: id, status: 'ended', shouldClose: true });
    expect(await c.balance(key)).toBe(990_000);
    expect((await beat(key, id)).body.data.item).toMatchObject({ status: 'ended', shouldClose: true, closeReason: 'client_end' });
    expect((await c.stateOf(key)).pending_timers).toEqual([]);
  });

  it('fails after more than 30 s without a heartbeat, billed up to the deadline', async () => {
    const key = 'agents-t';
    await c.ctl.putAccount(key, { balance_micro: 1_000_000 });
    const idle = (await create(key)).body.data.item.sessionId;
    const talking = await createJoined(key);
    await beat(key, talking);
    await c.ctl.advance(30_000);
    expect((await check(key, idle)).body.data.item.status).toBe('connecting');
    await c.ctl.advance(1);
    const sessions = await sessionsOf(key);
    expect(sessions.map((s) => [s.status, s.close_reason])).toEqual([
      ['failed', 'heartbeat_timeout'],
      ['failed', 'heartbeat_timeout'],
    ]);
    expect((await check(key, talking)).body.data.item).toMatchObject({ status: 'failed', shouldClose: true, closeReason: 'heartbeat_timeout' });
    expect(await c.balance(key)).toBe(940_000);
    expect((await end(key, idle)).body.data.item).toEqual({ sessionId: idle, status: 'ended', shouldClose: true });
  });

  it('an injected fault on a heartbeat fails the session', async () => {
    const key = 'agents-f';
    const id = await createJoined(key);
    await beat(key, id);
    const r = await beat(key, id, { 'x-emulator-fault': 'code=10000' });
    expect(r.body).toMatchObject({ error_code: 10000, succeed: false });
    expect((await check(key, id)).body.data.item).toMatchObject({ status: 'failed', shouldClose: true, closeReason: 'fault' });
  });

  it('ends the session when the balance runs out', async () => {
    const key = 'agents-b0';
    await c.ctl.putAccount(key, { balance_micro: 4_000 });
    const id = await createJoined(key);
    await beat(key, id);
    const inCallAt = (await sessionsOf(key))[0].in_call_at_ms;
    await c.ctl.advance(3_000);
    // The clock's move alone ends it, at the moment the 2 s of balance ran out (no request needed).
    const s = await c.stateOf(key);
    expect(s.resources.agent_sessions[0]).toMatchObject({ status: 'ended', close_reason: 'balance_exhausted', closed_at_ms: inCallAt + 2_000, billed_sec: 2 });
    expect(s.pending_timers).toEqual([]);
    expect((await beat(key, id)).body.data.item).toMatchObject({ status: 'ended', shouldClose: true, closeReason: 'balance_exhausted', remainingSeconds: 0 });
    expect(await c.balance(key)).toBe(0);
  });

  it('session_id: missing → 10001, unknown or another key’s → 10002', async () => {
    const id = (await create('agents-q')).body.data.item.sessionId;
    for (const [method, path] of [
      ['GET', 'check'],
      ['POST', 'heartbeat'],
      ['DELETE', 'end'],
    ] as const) {
      expect((await c.send(method, `${BASE}/${path}`, 'agents-q')).body.error_code).toBe(10001);
      expect((await c.send(method, `${BASE}/${path}?session_id=nope`, 'agents-q')).body.error_code).toBe(10002);
      expect((await c.send(method, `${BASE}/${path}${q(id)}`, 'agents-q2')).body.error_code).toBe(10002);
    }
    expect((await check('agents-q', id)).body.data.item.status).toBe('connecting');
  });
});

describe('persistence', () => {
  it('keeps sessions and idempotency keys, and rebuilds the heartbeat deadline', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agents-'));
    const first = await startTestEmulator({ dataDir });
    const post = () => sessionClient(first).post(`${BASE}/create`, { agentId: 'agent_demo' }, 'agents-d', { 'idempotency-key': 'keep-1' });
    const item = (await post()).body.data.item;
    await first.close();
    const second = await startTestEmulator({ dataDir });
    try {
      const c2 = sessionClient(second);
      const again = await c2.post(`${BASE}/create`, { agentId: 'agent_demo' }, 'agents-d', { 'idempotency-key': 'keep-1' });
      // The same session; wsUrl names the room server as it listens now (the platform listener).
      expect(again.body.data.item).toEqual({ ...item, wsUrl: second.platformUrl.replace('http', 'ws') });
      expect((await c2.stateOf('agents-d')).pending_timers.map((t) => t.label)).toEqual([`agent heartbeat timeout ${item.sessionId}`]);
      await c2.ctl.freeze(true);
      await c2.ctl.advance(31_000);
      expect((await c2.send('GET', `${BASE}/check?session_id=${item.sessionId}`, 'agents-d')).body.data.item).toMatchObject({
        status: 'failed',
        closeReason: 'heartbeat_timeout',
      });
    } finally {
      await second.close();
    }
  });
});
