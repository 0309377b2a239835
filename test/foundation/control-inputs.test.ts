import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl: c } = emulatorForFile({ plane: 'speech' });

const json = { 'content-type': 'application/json' };

describe('control plane: unknown fields anywhere are 400 naming them', () => {
  it('unknown query parameters on every route, on every listener', async () => {
    for (const url of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      const cases: [string, string, string][] = [
        ['POST', '/reset?acount=k', 'acount'],
        ['GET', '/clock?x=1', 'x'],
        ['GET', '/state?verbose=1', 'verbose'],
        ['GET', '/faults?all=1', 'all'],
        ['GET', '/journal?limit=1&since=5', 'since'],
        ['GET', '/health?deep=1', 'deep'],
      ];
      for (const [method, path, field] of cases) {
        const r = await call(`${url}/_emulator${path}`, { method });
        expect(r.status, `${method} ${path} ${r.text}`).toBe(400);
        expect(r.body.error.message).toContain(field);
      }
    }
    // the parameters a route does accept still work, and an unknown route stays 404
    expect((await call(`${emu.speechUrl}/_emulator/journal?limit=1&path=/x&account=k`)).status).toBe(200);
    expect((await call(`${emu.speechUrl}/_emulator/nothing?x=1`)).status).toBe(404);
  });

  it('a body sent to a route that reads none is 400 (a reset with {"account":…} does not reset everything in silence)', async () => {
    await c.putAccount('kept-key', { project: 'kept' });
    const r = await c.call('POST', '/reset', { account: 'kept-key' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/no body/);
    expect((await c.account('kept-key')).body.project).toBe('kept'); // nothing was reset
    expect((await c.call('DELETE', '/journal', { all: true })).status).toBe(400);
    // an empty object is no body
    expect((await c.call('POST', '/reset', {})).status).toBe(200);
    expect((await c.call('DELETE', '/faults', {})).status).toBe(200);
  });

  it('a JSON null or a text/plain body is not "no body"', async () => {
    for (const path of ['/clock', '/faults']) {
      const r = await call(`${emu.platformUrl}/_emulator${path}`, { method: 'POST', body: 'null', headers: json });
      expect(r.status, path).toBe(400);
      expect(r.body.error.message).toMatch(/expected object/);
    }
    // A text/plain body is what a page on another origin may send without a preflight: refused before it is read.
    const r = await call(`${emu.platformUrl}/_emulator/accounts/k`, { method: 'PUT', body: '{"project":"p"}', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/takes a JSON body.*not text\/plain/);
  });
});
