import { beforeAll, describe, expect, it } from 'vitest';
import { call, control, emulatorForFile, type JsonReply } from '../helpers/emulator.js';
import { rawGet } from '../helpers/raw.js';

const { emu } = emulatorForFile();
let listeners: { name: string; url: string }[];

beforeAll(() => {
  listeners = [
    { name: 'speech', url: emu.speechUrl },
    { name: 'speech-backup', url: emu.speechBackupUrl },
    { name: 'platform', url: emu.platformUrl },
  ];
});

function expectServiceShape(name: string, r: JsonReply, path: string) {
  expect(r.status, `${name} ${path}`).toBe(404);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  if (name === 'platform') {
    expect(r.body).toMatchObject({ succeed: false, data: null, error_code: expect.any(Number) });
    expect(r.body.error_message).toContain(path);
  } else {
    expect(r.body.base_resp.status_code).toBeGreaterThan(0);
    expect(r.body.base_resp.status_msg).toContain(path);
    expect(r.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
  }
}

describe('unknown routes', () => {
  it('answer 404 in the service shape naming the path, on every listener', async () => {
    for (const { name, url } of listeners) {
      expectServiceShape(name, await call(`${url}/v1/no_such_op?x=1`), '/v1/no_such_op');
      expectServiceShape(name, await call(`${url}/v1/no_such_op`, { json: { text: 'hi' } }), '/v1/no_such_op');
    }
  });

  it('stay 404 in the service shape with a broken, oversized or foreign body', async () => {
    const bodies: [string, string][] = [
      ['application/json', '{"text": '],
      ['application/json', `{"text":"${'a'.repeat(1_100_000)}"}`],
      ['application/xml', '<a/>'],
      ['application/json', ''],
    ];
    for (const { name, url } of listeners) {
      for (const [type, body] of bodies) {
        const r = await call(`${url}/v1/missing`, { method: 'POST', body, headers: { 'content-type': type } });
        expectServiceShape(name, r, '/v1/missing');
      }
    }
  });

  it('speech trace ids are seeded per account: same key, same sequence after a reset', async () => {
    const ids = async () => {
      await control(emu.speechUrl).reset();
      const out: string[] = [];
      for (let i = 0; i < 2; i++) out.push((await call(`${emu.speechUrl}/nope`, { headers: { authorization: 'Bearer trace-key' } })).body.trace_id);
      return out;
    };
    const a = await ids();
    expect(a[0]).not.toBe(a[1]);
    expect(await ids()).toEqual(a);
  });
});

describe('control plane errors', () => {
  it('health answers on every listener with the service URLs', async () => {
    for (const { url } of listeners) {
      const r = await call(`${url}/_emulator/health`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 'ok', version: expect.any(String) });
      expect(r.body.services).toEqual({ speech: emu.speechUrl, speech_backup: emu.speechBackupUrl, platform: emu.platformUrl });
    }
  });

  it('invalid bodies, values and unknown fields answer 400 with a JSON body naming the problem, on every listener', async () => {
    for (const { url } of listeners) {
      const c = control(url);
      const cases: [JsonReply, RegExp][] = [
        [await call(`${url}/_emulator/clock`, { method: 'POST', body: '{"advance_ms"', headers: { 'content-type': 'application/json' } }), /JSON/],
        [await c.setClock({ advance_ms: 'x' as unknown as number }), /advance_ms/],
        [await c.call('POST', '/clock', { speed: 2 }), /speed/],
        [await c.addFault({ fault: { code: 'x' } }), /code/],
        [await c.putAccount('k', { balance_micro: -1 }), /balance_micro/],
        [await c.call('POST', '/reset?account='), /account/],
        [await c.journal({ limit: 'many' }), /limit/],
      ];
      for (const [r, re] of cases) {
        expect(r.status, `${url} ${r.text}`).toBe(400);
        expect(r.headers.get('content-type')).toMatch(/json/);
        expect(r.body.error.message).toMatch(re);
        expect(r.text).not.toMatch(/at .*\.ts:\d+|<html/i);
      }
    }
  });

  it('an unknown control route is a JSON 404', async () => {
    for (const { url } of listeners) {
      const r = await call(`${url}/_emulator/nothing-here`);
      expect(r.status).toBe(404);
      expect(r.body.error.message).toContain('/_emulator/nothing-here');
    }
  });
});

describe('control plane bodies', () => {
  it('an empty body with a JSON content type is no body (reset, DELETE, clock read-back)', async () => {
    for (const [method, path] of [
      ['POST', '/reset'],
      ['DELETE', '/faults'],
      ['DELETE', '/journal'],
      ['POST', '/clock'],
    ]) {
      const r = await call(`${emu.speechUrl}/_emulator${path}`, { method, headers: { 'content-type': 'application/json' } });
      expect(r.status, `${method} ${path} ${r.text}`).toBe(200);
    }
  });

  it('a form body (what a page may send without a preflight) is refused 403 naming the content type', async () => {
    const r = await call(`${emu.platformUrl}/_emulator/clock`, {
      method: 'POST',
      body: 'advance_ms=5',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toContain('application/x-www-form-urlencoded');
  });

  it('keys named on the control plane are trimmed like presented keys; a blank key is 400', async () => {
    const c = control(emu.platformUrl);
    await c.putAccount(' trimmed-key ', { project: 'trim' });
    const resolved = emu.emulator.accounts.resolve('trimmed-key');
    expect(resolved.ok && resolved.account.project).toBe('trim');
    for (const r of [
      await c.putAccount(' ', {}),
      await c.account(' '),
      await c.reset(' '),
      await c.addFault({ account: ' ', fault: { code: 1 } }),
      await c.journal({ account: ' ' }),
    ]) {
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.message).toMatch(/non-empty key/);
    }
  });
});

describe('URLs the router cannot read', () => {
  it('a bad %-escape answers 400 in the service shape, not the framework shape', async () => {
    for (const { name, url } of listeners) {
      const r = await rawGet(url, '/v1/voices/%zz');
      expect(r.status, name).toBe(400);
      const body = JSON.parse(r.body.toString());
      if (name === 'platform') expect(body).toMatchObject({ error_code: 10001, succeed: false, data: null });
      else {
        expect(body.base_resp.status_code).toBe(2013);
        expect(r.headers['trace-id']).toBe(body.trace_id);
      }
      expect(body).not.toHaveProperty('code');
    }
  });
});
