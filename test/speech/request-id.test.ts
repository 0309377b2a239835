import { describe, expect, it } from 'vitest';
import { emulatorForFile, type JsonReply } from '../helpers/emulator.js';
import { rawRequest } from '../helpers/raw.js';
import { speechApi } from './beyond.js';
import { req, t2a } from './helpers.js';
import { stt } from './stt/stt-helpers.js';

/** `Minimax-Request-Id`: every speech answer carries the trace id a second time, as the real service does. */
const { emu } = emulatorForFile({ plane: 'speech' });

/**
 * LiveKit's Python plugin, replayed: the id it reports is `Trace-Id`, else `X-Trace-Id`, else
 * `Minimax-Request-Id`, read from the answer's headers.
 */
function livekitRequestId(headers: Headers | Record<string, string>): string | null {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name.toLowerCase()] ?? null));
  return get('Trace-Id') || get('X-Trace-Id') || get('Minimax-Request-Id');
}

function expectRequestId(r: JsonReply) {
  const traceId = r.body.trace_id as string;
  expect(traceId).toMatch(/\S/);
  expect(r.headers.get('minimax-request-id')).toBe(traceId);
  expect(r.headers.get('trace-id')).toBe(traceId);
  expect(livekitRequestId(r.headers)).toBe(traceId);
  // A proxy that keeps only the request id still lets the plugin find the same id.
  const onlyRequestId = new Headers({ 'minimax-request-id': r.headers.get('minimax-request-id')! });
  expect(livekitRequestId(onlyRequestId)).toBe(traceId);
}

describe('Minimax-Request-Id on every speech answer', () => {
  it('synthesis: a success, a refusal (2013), a missing key (1004), an unknown path', async () => {
    expectRequestId(await t2a(emu.speechUrl, req()));
    expectRequestId(await t2a(emu.speechUrl, req({ model: 'nope' })));
    expectRequestId(await t2a(emu.speechUrl, req(), { key: null }));
    const api = speechApi(emu.speechUrl, 'request-id');
    expectRequestId(await api.post('/v1/no_such_operation', {}));
    expectRequestId(await api.get('/v1/get_voice'));
    expectRequestId(await api.post('/v1/get_voice', { voice_type: 'system' }));
  });

  it("streamed synthesis: the event stream's head carries it, with the trace id its events carry", async () => {
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer request-id', 'content-type': 'application/json' },
      body: JSON.stringify(req({ stream: true })),
    });
    const text = await res.text();
    const first = JSON.parse(text.split('\n\n')[0]!.replace(/^data: /, ''));
    expect(res.headers.get('minimax-request-id')).toBe(first.trace_id);
    expect(livekitRequestId(res.headers)).toBe(first.trace_id);
  });

  it('speech to text: a refusal carries it', async () => {
    const r = await stt(emu.speechUrl, { fields: {}, files: [] });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.headers.get('minimax-request-id')).toBe(r.headers.get('trace-id'));
    expect(r.headers.get('minimax-request-id')).toMatch(/\S/);
  });

  it('an unparseable request line, answered before any route', async () => {
    const r = await rawRequest(emu.speechUrl, 'GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(r.status).toBe(400);
    expect(r.headers['minimax-request-id']).toBe(JSON.parse(r.body).trace_id);
  });
});
