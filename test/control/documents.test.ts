import { Parser } from '@asyncapi/parser';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu } = emulatorForFile();

/** `/a/:b/*` as @fastify/swagger writes it: `/a/{b}/{*}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');
/** Routes declared `schema: { hide: true }`: not operations of the spec (a path without its id answers a parameter error). */
const HIDDEN = ['DELETE /v1/voice', 'DELETE /api/v1/audio/sessions'];
const isControl = (url: string) => url === '/_emulator' || url.startsWith('/_emulator/');

describe('API documents generated from the routes', () => {
  for (const name of ['speech', 'platform', 'control'] as const) {
    it(`/_emulator/openapi/${name}.json is valid OpenAPI 3.1 and holds every HTTP route`, async () => {
      const res = await call(`${emu.platformUrl}/_emulator/openapi/${name}.json`);
      expect(res.status).toBe(200);
      const doc = res.body;
      expect(doc.openapi).toBe('3.1.0');
      const result = await validate(structuredClone(doc));
      expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);

      const routes = emu.emulator.routes.filter(
        (r) =>
          !r.websocket && r.method !== 'HEAD' && (name === 'control' ? isControl(r.url) && r.service === 'speech' : !isControl(r.url) && r.service === name),
      );
      expect(routes.length).toBeGreaterThan(name === 'speech' ? 2 : 10);
      const missing = routes
        .filter((r) => !HIDDEN.includes(`${r.method} ${r.url}`) && !doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()])
        .map((r) => `${r.method} ${r.url}`);
      expect(missing).toEqual([]);
      // No WebSocket route in an OpenAPI document.
      for (const r of emu.emulator.routes.filter((x) => x.websocket)) expect(doc.paths[openApiPath(r.url)]?.get, r.url).toBeUndefined();
    });
  }

  it('declares each service auth scheme, the request schemas and the shared error shapes', async () => {
    const speech = (await call(`${emu.speechUrl}/_emulator/openapi/speech.json`)).body;
    expect(speech.components.securitySchemes.bearerKey).toEqual({ type: 'http', scheme: 'bearer' });
    expect(speech.security).toEqual([{ bearerKey: [] }]);
    const t2a = speech.paths['/v1/t2a_v2'].post;
    expect(t2a.requestBody.content['application/json'].schema.properties.model).toBeDefined();
    expect(t2a.responses.default.content['application/json'].schema.$ref).toBe('#/components/schemas/SpeechError');
    expect(speech.components.schemas.SpeechError.properties.base_resp.properties.status_code).toBeDefined();

    const platform = (await call(`${emu.speechUrl}/_emulator/openapi/platform.json`)).body;
    expect(platform.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(platform.components.securitySchemes.apiKeyQuery).toEqual({ type: 'apiKey', in: 'query', name: 'api_key' });
    expect(platform.components.schemas.PlatformEnvelope.required).toEqual(expect.arrayContaining(['error_code', 'error_message', 'succeed']));
    expect(platform.paths['/v1/audio/assistant/start'].post.requestBody.content['application/json'].schema.properties).toBeDefined();
    // Links handed out need no key.
    expect(platform.paths['/download/{*}'].get.security).toEqual([]);

    const controlDoc = (await call(`${emu.speechUrl}/_emulator/openapi/control.json`)).body;
    expect(controlDoc.components.securitySchemes.controlToken).toEqual({ type: 'http', scheme: 'bearer' });
    expect(controlDoc.paths['/_emulator/journal/live'].get).toBeDefined();
  });

  it('/_emulator/asyncapi.json is valid AsyncAPI 3.0 with a channel per WebSocket route', async () => {
    const res = await call(`${emu.platformUrl}/_emulator/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.asyncapi).toBe('3.0.0');
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(res.body));
    const errors = diagnostics.filter((d) => d.severity === 0);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    const addresses = document!
      .channels()
      .all()
      .map((c) => c.address());
    const sockets = emu.emulator.routes.filter((r) => r.websocket).map((r) => r.url);
    expect(sockets).toEqual(expect.arrayContaining(['/api/v1/audio/conversation/stream', '/v1/speech-to-text/stream']));
    expect([...addresses].sort()).toEqual([...new Set(sockets)].sort());
    // The first message of the conversation stream comes from the socket's own schema.
    const meta = res.body.channels.api_v1_audio_conversation_stream.messages.meta.payload;
    expect(meta.required).toContain('voice_id');
    // The speech socket's task_start, from its schema too.
    expect(res.body.channels.ws_v1_t2a_v2.messages.task_start.payload.properties.event.const).toBe('task_start');
  });

  it('an unknown document name answers 404 in the control plane shape', async () => {
    const res = await call(`${emu.platformUrl}/_emulator/openapi/nope.json`);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toMatch(/speech\.json/);
  });

  it('GET / sends a browser to the inspector and gives anything else the index of URLs', async () => {
    const page = await fetch(`${emu.speechUrl}/`, { headers: { accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/_emulator/');
    const index = await call(`${emu.platformUrl}/`);
    expect(index.status).toBe(200);
    expect(index.body.service).toBe('platform');
    expect(index.body.openapi.speech).toBe(`${emu.platformUrl}/_emulator/openapi/speech.json`);
    expect(index.body.inspector).toBe(`${emu.platformUrl}/_emulator/`);
  });
});

describe('with a control token', () => {
  const { emu: run } = emulatorForFile({ start: { controlToken: 'sekret' } });
  it('documents need the token; the inspector files and the live feed with ?token= do not need the header', async () => {
    expect((await call(`${run.speechUrl}/_emulator/openapi/speech.json`)).status).toBe(401);
    expect((await call(`${run.speechUrl}/_emulator/openapi/speech.json`, { headers: { authorization: 'Bearer sekret' } })).status).toBe(200);
    const page = await fetch(`${run.speechUrl}/_emulator/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect((await fetch(`${run.speechUrl}/_emulator/inspector/app.js`)).status).toBe(200);
    expect((await call(`${run.speechUrl}/_emulator/journal/live`)).status).toBe(401);
    expect((await call(`${run.speechUrl}/_emulator/journal/live?token=wrong`)).status).toBe(401);
    const ac = new AbortController();
    const live = await fetch(`${run.speechUrl}/_emulator/journal/live?token=sekret`, { signal: ac.signal });
    expect(live.status).toBe(200);
    expect(live.headers.get('content-type')).toMatch(/text\/event-stream/);
    ac.abort();
  });
});
