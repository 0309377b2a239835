import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control, startTestEmulator } from '../helpers/emulator.js';

/** One raw HTTP request, so Host, Origin and Sec-Fetch-Site are exactly what a browser or a rebinding page would send. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const RULE = JSON.stringify({ path: '/v1/t2a_v2', times: 5, fault: { code: 1002 } });

describe('the control plane refuses other origins and rebinding names (token-less mode)', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator({ allowedHosts: ['emulator.internal'] });
  });
  afterAll(() => emu.close());

  const hostOf = () => new URL(emu.speechUrl).host;

  it('a page on another origin can neither read the journal nor add a fault nor reset; the emulator itself can', async () => {
    const evil = { origin: 'http://evil.example', 'content-type': 'application/json' };
    expect((await raw(emu.speechUrl, 'POST', '/_emulator/faults', { 'content-type': 'application/json' }, RULE)).status).toBe(201);
    for (const [method, path, body] of [
      ['GET', '/_emulator/journal'],
      ['GET', '/_emulator/state'],
      ['POST', '/_emulator/faults', RULE],
      ['POST', '/_emulator/reset', '{}'],
      ['DELETE', '/_emulator/faults'],
    ] as const) {
      const r = await raw(emu.speechUrl, method, path, evil, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.error.message).toContain('Origin "http://evil.example" may not use the control plane');
    }
    // Nothing changed: the one rule added by the test itself is still queued.
    expect((await control(emu.speechUrl).faults()).body.rules).toHaveLength(1);
    // The emulator's own origin (the inspector) may.
    const own = await raw(emu.speechUrl, 'GET', '/_emulator/faults', { origin: `http://${hostOf()}` });
    expect(own.status).toBe(200);
  });

  it('a cross-site request without Origin and a simple-request body (form, text/plain, no type) are refused', async () => {
    const site = await raw(emu.speechUrl, 'POST', '/_emulator/reset', { 'sec-fetch-site': 'cross-site' });
    expect(site.status).toBe(403);
    expect(site.json.error.message).toBe('a cross-site browser request may not use the control plane');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await raw(emu.speechUrl, 'POST', '/_emulator/reset', { 'content-type': type }, 'a=1');
      expect(r.status, type).toBe(403);
      expect(r.json.error.message).toContain('takes a JSON body (Content-Type: application/json)');
    }
    expect((await raw(emu.speechUrl, 'POST', '/_emulator/faults', {}, RULE)).json.error.message).toContain('not a body without a Content-Type');
    expect((await control(emu.speechUrl).faults()).body.rules).toHaveLength(1);
    // A bodiless POST (curl -X POST …/reset) still works.
    expect((await raw(emu.speechUrl, 'POST', '/_emulator/reset')).status).toBe(200);
    expect((await control(emu.speechUrl).faults()).body.rules).toHaveLength(0);
  });

  it('a Host that could be a rebinding name is refused on the control plane and on the index; loopback, IPs and listed names are not', async () => {
    const port = new URL(emu.speechUrl).port;
    for (const path of ['/_emulator/state', '/_emulator/health', '/']) {
      const r = await raw(emu.speechUrl, 'GET', path, { host: `rebind.evil.example:${port}` });
      expect(r.status, path).toBe(403);
      expect(r.json.error.message).toContain('Host "rebind.evil.example:');
      expect(JSON.stringify(r.json)).not.toContain('_emulator/journal/live');
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `10.1.2.3:${port}`, `app.localhost:${port}`, `emulator.internal:${port}`]) {
      expect((await raw(emu.speechUrl, 'GET', '/_emulator/state', { host })).status, host).toBe(200);
    }
    // The index names the Host it was asked on, for allowed names only.
    const index = await raw(emu.platformUrl, 'GET', '/', { host: `emulator.internal:${port}` });
    expect(index.json.control).toBe(`http://emulator.internal:${port}/_emulator`);
    // The emulated APIs stay open to any Host.
    const api = await raw(
      emu.speechUrl,
      'POST',
      '/v1/t2a_v2',
      { host: 'rebind.evil.example', authorization: 'Bearer k', 'content-type': 'application/json' },
      '{}',
    );
    expect(api.status).toBe(200);
    expect(api.json.base_resp.status_code).toBe(2013);
  });

  it('the inspector is never framed and runs only its own scripts', async () => {
    for (const path of ['/_emulator/', '/_emulator/inspector/app.js']) {
      const r = await raw(emu.speechUrl, 'GET', path);
      expect(r.status).toBe(200);
      expect(r.headers['x-frame-options']).toBe('DENY');
      expect(r.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    }
  });
});

describe('the control plane with an allow-list of origins and with a token', () => {
  let emu: RunningEmulator;
  const PAGE = 'http://localhost:5173';
  beforeAll(async () => {
    emu = await startTestEmulator({ corsOrigins: [PAGE], controlToken: 'sekret' });
  });
  afterAll(() => emu.close());

  it('an allowed origin may drive it with the token; a no-cors text/plain reset never acts', async () => {
    const ok = await raw(emu.speechUrl, 'GET', '/_emulator/faults', { origin: PAGE, authorization: 'Bearer sekret' });
    expect(ok.status).toBe(200);
    const plain = await raw(emu.speechUrl, 'POST', '/_emulator/reset', { origin: PAGE, authorization: 'Bearer sekret', 'content-type': 'text/plain' }, 'x');
    expect(plain.status).toBe(403);
    expect((await raw(emu.speechUrl, 'GET', '/_emulator/faults', { origin: 'http://other.example', authorization: 'Bearer sekret' })).status).toBe(403);
  });

  it('the Bearer scheme is matched in any case; a wrong or partial token is 401; with a token any Host is accepted', async () => {
    expect((await raw(emu.speechUrl, 'GET', '/_emulator/state', { authorization: 'bearer sekret' })).status).toBe(200);
    expect((await raw(emu.speechUrl, 'GET', '/_emulator/state', { authorization: 'BEARER   sekret' })).status).toBe(200);
    for (const wrong of ['Bearer sekre', 'Bearer sekret2', 'Bearer ', 'sekret', 'Basic sekret']) {
      expect((await raw(emu.speechUrl, 'GET', '/_emulator/state', { authorization: wrong })).status, wrong).toBe(401);
    }
    expect((await raw(emu.speechUrl, 'GET', '/_emulator/state', { authorization: 'Bearer sekret', host: 'any.name.example' })).status).toBe(200);
  });
});
