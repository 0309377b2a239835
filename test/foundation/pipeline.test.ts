import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ok } from '../../src/services/platform/envelope.js';
import { SpeechError } from '../../src/services/speech/errors.js';
import { call, control } from '../helpers/emulator.js';
import { startProbeApps, type ProbeApps } from './probe-app.js';

/**
 * The shared request pipeline on probe routes: strict keys from an overriding accounts fixture,
 * the platform's key, capability and fault checks in the family's shape, and body errors in each
 * service's shape. (No operation of the specs is needed.)
 */
let apps: ProbeApps;
let fixturesDir: string;
const logLines: string[] = [];
const LISTED = 'custom-fixture-key-0001';
const TTS_ONLY = 'custom-tts-only-key-0002';
const DISABLED = 'custom-disabled-key-0003';
const UNKNOWN = 'never-listed-key-0004';

beforeAll(async () => {
  fixturesDir = mkdtempSync(join(tmpdir(), 'fixtures-'));
  writeFileSync(
    join(fixturesDir, 'accounts.json'),
    JSON.stringify([
      { key: LISTED, project: 'custom' },
      { key: TTS_ONLY, capabilities: ['tts'] },
      { key: DISABLED, disabled: true },
    ]),
  );
  apps = await startProbeApps(
    { strictKeys: true, fixturesDir },
    {
      logLines,
      speech: (app) => {
        app.post('/_probe/echo', async (req) => ({ base_resp: { status_code: 0, status_msg: 'success' }, body: req.body }));
        app.post('/_probe/boom', async () => {
          throw new Error('kaboom at secret.ts:12');
        });
        app.post('/_probe/code', async () => {
          throw new SpeechError(1039);
        });
      },
      platform: (app) => {
        const body = z.object({ text: z.string().min(1) });
        app.post('/_probe/tts', { schema: { body }, config: { family: 'tts', capability: 'tts' } }, async (req) => ok({ project: req.ctx.account!.project }));
        app.post('/_probe/clone', { config: { family: 'voice', capability: 'cloning' } }, async () => ok({}));
        app.post('/_probe/agent', { config: { family: 'agent', capability: 'agents' } }, async () => ok({}));
        app.post('/_probe/call', { config: { family: 'call', capability: 'calls' } }, async () => ok({}));
        app.post('/_probe/boom', { config: { family: 'tts', capability: 'tts' } }, async () => {
          throw new Error('kaboom at secret.ts:12');
        });
      },
    },
  );
});
afterAll(async () => {
  await apps.close();
  rmSync(fixturesDir, { recursive: true, force: true });
});

const plat = (path: string, key: string | null, json: unknown = { text: 'hi' }, headers: Record<string, string> = {}) =>
  call(`${apps.platformUrl}${path}`, { json, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });

describe('fixtures override, file by file', () => {
  it('accounts.json comes from the user folder, the others from the package', () => {
    expect(apps.emu.fixtures.sources['accounts.json']).toBe(join(fixturesDir, 'accounts.json'));
    expect(apps.emu.fixtures.sources['speech-voices.json']).not.toContain(fixturesDir);
    expect(apps.emu.fixtures.data['speech-voices.json'].length).toBeGreaterThan(0);
  });
});

describe('strict keys', () => {
  it('a key of the overriding fixture works and carries its settings', async () => {
    const r = await plat('/_probe/tts', LISTED);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ error_code: 0, error_message: '', succeed: true, data: { project: 'custom' } });
  });

  it('an unknown key (and a default fixture key that was overridden) is the family auth error', async () => {
    for (const key of [UNKNOWN, 'emulator-demo-key']) {
      const r = await plat('/_probe/tts', key);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error_code: 10003, succeed: false, data: null });
      expect(r.text).not.toContain(key);
    }
    const callFamily = await plat('/_probe/call', UNKNOWN);
    expect(callFamily.status).toBe(200);
    expect(callFamily.body).toMatchObject({ error_code: 20001, succeed: false });
    expect((await control(apps.platformUrl).account(UNKNOWN)).status).toBe(404);
  });

  it('speech: an unknown or disabled key is 1004 in base_resp; a listed key passes the key check', async () => {
    const t2a = (key: string) => call(`${apps.speechUrl}/v1/t2a_v2`, { json: { model: 'speech-02-turbo' }, headers: { authorization: `Bearer ${key}` } });
    for (const key of [UNKNOWN, DISABLED, 'emulator-demo-key']) {
      const r = await t2a(key);
      expect(r.body.base_resp.status_code, key).toBe(1004);
      expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
      expect(r.text).not.toContain(key);
    }
    const listed = await t2a(LISTED); // no text: the body check answers, so the key was accepted
    expect(listed.body.base_resp.status_code).toBe(2013);
  });

  it('a key PUT on the control plane becomes valid', async () => {
    const key = 'put-later-key-0005';
    expect((await plat('/_probe/tts', key)).status).toBe(401);
    expect((await control(apps.platformUrl).putAccount(key, { project: 'late' })).status).toBe(200);
    const r = await plat('/_probe/tts', key);
    expect(r.status).toBe(200);
    expect(r.body.data.project).toBe('late');
  });

  it('a missing key and a disabled key are auth errors too', async () => {
    const missing = await plat('/_probe/tts', null);
    expect(missing.status).toBe(401);
    expect(missing.body.error_message).toMatch(/missing/);
    const disabled = await plat('/_probe/tts', DISABLED);
    expect(disabled.status).toBe(401);
    expect(disabled.body).toMatchObject({ error_code: 10003 });
  });
});

describe('capabilities in the family shape', () => {
  it('a key without the capability is refused; with it, accepted', async () => {
    const voice = await plat('/_probe/clone', TTS_ONLY);
    expect(voice.status).toBe(200);
    expect(voice.body).toMatchObject({ error_code: 10003, succeed: false });
    expect(voice.body.error_message).toContain('cloning');
    const agent = await plat('/_probe/agent', TTS_ONLY);
    expect(agent.body).toMatchObject({ error_code: 10004, succeed: false });
    expect((await plat('/_probe/clone', LISTED)).body.succeed).toBe(true);
    expect((await plat('/_probe/tts', TTS_ONLY)).body.succeed).toBe(true);
  });
});

describe('faults on a route', () => {
  it('code and status answer in the family shape, before the key check', async () => {
    const code = await plat('/_probe/tts', null, { text: 'hi' }, { 'x-emulator-fault': 'code=10014' });
    expect(code.status).toBe(429);
    expect(code.body).toMatchObject({ error_code: 10014, succeed: false });
    expect(code.headers.get('x-emulator-fault-ignored')).toBeNull();
    const status = await plat('/_probe/clone', LISTED, {}, { 'x-emulator-fault': 'status=429;cut_after_chunks=2' });
    expect(status.status).toBe(429);
    expect(status.body).toMatchObject({ succeed: false });
    expect(status.headers.get('x-emulator-fault-ignored')).toBe('cut_after_chunks');
  });
});

describe('body errors in the service shape', () => {
  it('platform: invalid JSON, wrong type, schema violation and oversize are param errors naming the problem', async () => {
    const bad = await call(`${apps.platformUrl}/_probe/tts`, {
      method: 'POST',
      body: '{"text":',
      headers: { 'x-api-key': LISTED, 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error_code: 10001, succeed: false });
    expect(bad.body.error_message).toMatch(/JSON/);
    const xml = await call(`${apps.platformUrl}/_probe/tts`, {
      method: 'POST',
      body: '<a/>',
      headers: { 'x-api-key': LISTED, 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(400);
    expect(xml.body.error_message).toContain('application/xml');
    const schema = await plat('/_probe/tts', LISTED, { text: '' });
    expect(schema.status).toBe(400);
    expect(schema.body).toMatchObject({ error_code: 10001 });
    expect(schema.body.error_message).toContain('text');
    const big = await plat('/_probe/tts', LISTED, { text: 'a'.repeat(1_100_000) });
    expect(big.status).toBe(400);
    expect(big.body.error_message).toMatch(/size|limit/);
  });

  it('speech: invalid JSON, wrong type and oversize are 2013 at HTTP 200 with a Trace-Id', async () => {
    const cases: [string, string][] = [
      ['application/json', '{"text":'],
      ['application/xml', '<a/>'],
      ['application/json', `{"text":"${'a'.repeat(1_100_000)}"}`],
    ];
    for (const [type, body] of cases) {
      const r = await call(`${apps.speechUrl}/_probe/echo`, { method: 'POST', body, headers: { 'content-type': type, authorization: `Bearer ${LISTED}` } });
      expect(r.status, type).toBe(200);
      expect(r.body.base_resp.status_code).toBe(2013);
      expect(r.body.base_resp.status_msg).toMatch(/^invalid params, /);
      expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
    }
    const good = await call(`${apps.speechUrl}/_probe/echo`, { json: { text: 'ok' } });
    expect(good.body.body).toEqual({ text: 'ok' });
    const coded = await call(`${apps.speechUrl}/_probe/code`, { json: {} });
    expect(coded.body.base_resp).toEqual({ status_code: 1039, status_msg: 'token limit' });
  });

  it('an exception inside a handler is the service error shape, never a stack trace', async () => {
    const s = await call(`${apps.speechUrl}/_probe/boom`, { json: {} });
    expect(s.status).toBe(200);
    expect(s.body.base_resp.status_code).toBe(1000);
    const p = await plat('/_probe/boom', LISTED);
    expect(p.status).toBe(500);
    expect(p.body).toMatchObject({ error_code: 10000, succeed: false });
    for (const r of [s, p]) expect(r.text).not.toMatch(/kaboom|secret\.ts/);
  });

  it('logs: one line per request with method, path, status, duration and account, never the full key', async () => {
    logLines.length = 0;
    await call(`${apps.platformUrl}/_probe/boom?api_key=${LISTED}`, { json: {} });
    await call(`${apps.speechUrl}/_probe/boom?key=${LISTED}`, { json: {}, headers: { authorization: `Bearer ${LISTED}` } });
    await plat('/_probe/tts', LISTED);
    const text = logLines.join('');
    expect(text).not.toContain(LISTED);
    const lines = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.filter((l) => l.path === '/_probe/tts' && l.status !== undefined);
    expect(request).toHaveLength(1);
    expect(request[0]).toMatchObject({ method: 'POST', status: 200, account: expect.stringMatching(/^cust…[0-9a-f]{6}$/) });
    expect(typeof request[0]!.ms).toBe('number');
    expect(lines.some((l) => l.msg === 'platform handler failed' && l.path === '/_probe/boom')).toBe(true);
  });

  it('the journal records each probe call with the account redacted', async () => {
    await control(apps.platformUrl).clearJournal();
    await plat('/_probe/tts', LISTED);
    const e = (await control(apps.platformUrl).journal()).body.entries[0];
    expect(e).toMatchObject({ service: 'platform', method: 'POST', path: '/_probe/tts', status: 200 });
    expect(e.request.body).toEqual({ text: 'hi' });
    expect(e.response.summary).toMatchObject({ succeed: true });
    expect(JSON.stringify(e)).not.toContain(LISTED);
  });
});
