import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { entryOf } from '../properties/endpoints.js';

/**
 * Admission (fault code, fault status, key, capability) comes before any body is read, on every route
 * of both services that takes a body: a body that is not JSON is answered exactly as a valid one is
 * while admission refuses, so a client never learns about its body before its key. The routes are the
 * ones the services registered (as the property tests take them), so a new route is covered.
 */
const { emu } = emulatorForFile();

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BAD_JSON = '{"text": "never closed';

/** Routes with a body that answer in their service's shape and meet the admission path (not /mcp: its key is in the body). */
function bodyRoutes(service: 'speech' | 'platform') {
  return emu.emulator.routes.filter((r) => {
    if (r.service !== service || !BODY_METHODS.has(r.method) || r.websocket || r.url === '/mcp') return false;
    return entryOf(r)?.shape === service;
  });
}

const urlOf = (base: string, url: string) => base + url.replace(/:[a-z_]+/g, 'x1').replace('*', 'x1');

type Answer = { body: any };
const codeOf = (a: Answer) => (a.body?.base_resp?.status_code ?? a.body?.error_code) as number;
const messageOf = (a: Answer) => (a.body?.base_resp?.status_msg ?? a.body?.error_message) as string;

for (const service of ['platform', 'speech'] as const) {
  describe(`${service}: admission before the body, on every route that takes one`, () => {
    const base = () => (service === 'platform' ? emu.platformUrl : emu.speechUrl);
    const keyHeader = (key: string): Record<string, string> => (service === 'platform' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` });

    it('the registered routes include the body routes', () => {
      expect(bodyRoutes(service).length).toBeGreaterThan(service === 'platform' ? 10 : 4);
    });

    it('no key: a body that is not JSON is refused for the key, as a valid body is', async () => {
      // The key's refusal in each route's family (10003 for synthesis; the agent family has its own code).
      const missingKeyText = service === 'platform' ? 'X-API-Key header is missing' : 'login fail';
      for (const route of bodyRoutes(service)) {
        const url = urlOf(base(), route.url);
        const name = `${route.method} ${route.url}`;
        const send = (body: string) => call(url, { method: route.method, body, headers: { 'content-type': 'application/json' } });
        const valid = await send('{}');
        const bad = await send(BAD_JSON);
        expect(messageOf(valid), `${name}: ${valid.text}`).toContain(missingKeyText);
        expect(codeOf(bad), `${name}: ${bad.text}`).toBe(codeOf(valid));
        expect(bad.status, name).toBe(valid.status);
        if (route.url === '/v1/text-to-speech') expect([bad.status, codeOf(bad)]).toEqual([401, 10003]);
        expect(messageOf(bad), name).toBe(messageOf(valid));
      }
    });

    it('an injected fault code is answered before a body that is not JSON', async () => {
      const code = service === 'platform' ? 10014 : 1002;
      for (const route of bodyRoutes(service)) {
        const name = `${route.method} ${route.url}`;
        const bad = await call(urlOf(base(), route.url), {
          method: route.method,
          body: BAD_JSON,
          headers: { 'content-type': 'application/json', 'x-emulator-fault': `code=${code}`, ...keyHeader('admission-fault') },
        });
        expect(codeOf(bad), `${name}: ${bad.text}`).toBe(code);
      }
    });

    it('with a key and no fault, the body is read: not JSON is a parameter error', async () => {
      const route = bodyRoutes(service).find((r) => r.url === (service === 'platform' ? '/v1/text-to-speech' : '/v1/t2a_v2'))!;
      const bad = await call(urlOf(base(), route.url), {
        method: 'POST',
        body: BAD_JSON,
        headers: { 'content-type': 'application/json', ...keyHeader('admission-body') },
      });
      expect(codeOf(bad), bad.text).toBe(service === 'platform' ? 10001 : 2013);
    });
  });
}

describe('the journal shows where a request stopped', () => {
  it('a body refused by its schema is journaled; a request refused by admission (before its body was read) has its body journaled after the refusal was decided', async () => {
    const journal = async () => (await call(`${emu.platformUrl}/_emulator/journal?limit=1`)).body.entries[0];
    const invalid = await call(`${emu.platformUrl}/v1/text-to-speech`, { json: { voice_id: 42 }, headers: { 'x-api-key': 'stages-key' } });
    expect(invalid.body.error_code).toBe(10001);
    expect((await journal()).request.body).toEqual({ voice_id: 42 });

    const refused = await call(`${emu.platformUrl}/v1/text-to-speech`, { json: { voice_id: 42 } });
    expect(refused.body.error_code).toBe(10003);
    const entry = await journal();
    expect(entry.status).toBe(401);
    expect(entry.response.code).toBe(10003);
    expect(entry.request.body).toEqual({ voice_id: 42 });
  });
});

describe('the journal of a refused body shows no credential', () => {
  it('a URL-encoded form refused before it was read is journaled by its fields, its api_key redacted', async () => {
    const secret = 'form-secret-key-0123456789';
    const refused = await call(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      body: `api_key=${secret}&text=hello&api_key=${secret}-2`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(refused.body.error_code).toBe(10003);
    const journal = await call(`${emu.platformUrl}/_emulator/journal?limit=1`);
    const entry = journal.body.entries[0];
    expect(entry.response.code).toBe(10003);
    expect(entry.request.body.text).toBe('hello');
    expect(entry.request.body.api_key).toHaveLength(2);
    expect(journal.text).not.toContain(secret);
  });
});
