import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';

/** Raw JSON-RPC framing of /mcp, with hand-written bodies (addendum B1). */
const { emu } = emulatorForFile();
let url: string;

beforeAll(() => {
  url = `${emu.platformUrl}/mcp`;
});

async function post(body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}
const rpc = (msg: unknown) => post(JSON.stringify(msg));

describe('initialize', () => {
  it('echoes each supported protocol version and answers the documented result, nothing more', async () => {
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      const r = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(r.json).sort()).toEqual(['id', 'jsonrpc', 'result']);
      expect(r.json.result.protocolVersion).toBe(v);
    }
    const r = await rpc({ jsonrpc: '2.0', id: 'a', method: 'initialize', params: { protocolVersion: '2023-01-01', capabilities: {} } });
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: expect.any(String), version: expect.any(String) },
      },
    });
    expect(Object.keys(r.json.result).sort()).toEqual(['capabilities', 'protocolVersion', 'serverInfo']);
    expect((await rpc({ jsonrpc: '2.0', id: 2, method: 'initialize' })).json.result.protocolVersion).toBe('2025-11-25');
  });
});

describe('requests and notifications', () => {
  it('a notification (no id key) gets 202 and an empty body; id 0 is a request', async () => {
    const n = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(n.status).toBe(202);
    expect(n.text).toBe('');
    // Unknown notifications are not answered either (nothing can be answered without an id).
    expect((await rpc({ jsonrpc: '2.0', method: 'notifications/whatever', params: {} })).status).toBe(202);
    const zero = await rpc({ jsonrpc: '2.0', id: 0, method: 'ping' });
    expect(zero.status).toBe(200);
    expect(zero.json).toEqual({ jsonrpc: '2.0', id: 0, result: {} });
  });

  it('ping answers {}', async () => {
    expect((await rpc({ jsonrpc: '2.0', id: 'p', method: 'ping' })).json).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
  });

  it('unknown method: -32601 with HTTP 200 and exactly {jsonrpc, id, error}', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 7, method: 'resources/list' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['error', 'id', 'jsonrpc']);
    expect(r.json.id).toBe(7);
    expect(r.json.error.code).toBe(-32601);
    expect(r.json.error.message).toContain('resources/list');
    // Inherited object keys are not methods.
    expect((await rpc({ jsonrpc: '2.0', id: 8, method: 'toString' })).json.error.code).toBe(-32601);
  });

  it('a client response (result without method) is accepted with 202', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 3, result: {} });
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
  });
});

describe('parse errors and invalid requests', () => {
  it('unparseable or empty body: -32700 with id null, HTTP 200', async () => {
    for (const body of ['{"jsonrpc":"2.0","id":1,', 'not json', '']) {
      const r = await post(body);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringContaining('parse error') } });
    }
  });

  it('a body over the 1 MB limit: -32600 in JSON-RPC shape, not the platform envelope', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1_100_000) } }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('1 MB') } });
  });

  it('a form content type (curl -d) and no content type are read as JSON too', async () => {
    const msg = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect((await post(msg, { 'content-type': 'application/x-www-form-urlencoded' })).json.result).toEqual({});
    expect((await post(msg, {})).json.result).toEqual({});
  });

  it('invalid request shapes: -32600, with the id when one could be read', async () => {
    const cases: [unknown, unknown][] = [
      [{ id: 1, method: 'ping' }, 1], // jsonrpc missing
      [{ jsonrpc: '1.0', id: 2, method: 'ping' }, 2],
      [{ jsonrpc: '2.0', id: 3 }, 3], // method missing
      [{ jsonrpc: '2.0', id: 4, method: 42 }, 4],
      [{ jsonrpc: '2.0', id: 5, method: 'ping', params: 'x' }, 5],
      [{ jsonrpc: '2.0', id: 6, method: 'ping', params: null }, 6],
      [{ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
      [42, null],
      ['ping', null],
    ];
    for (const [msg, id] of cases) {
      const r = await rpc(msg);
      expect(r.status, JSON.stringify(msg)).toBe(200);
      expect(r.json, JSON.stringify(msg)).toEqual({ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringContaining('invalid request') } });
    }
  });
});

describe('batches', () => {
  it('are answered as batches, in order, without entries for notifications', async () => {
    const r = await rpc([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
      { foo: 1 },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    ]);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(4);
    expect(r.json[0]).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(r.json[1].error.code).toBe(-32601);
    expect(r.json[2]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(r.json[3]).toMatchObject({ id: 3, error: { code: -32602 } });
  });

  it('an all-notification batch gets 202; an empty batch is one -32600 error', async () => {
    const n = await rpc([
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
    ]);
    expect(n.status).toBe(202);
    expect(n.text).toBe('');
    const e = await rpc([]);
    expect(e.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('empty batch') } });
  });
});

describe('tools/call framing', () => {
  it('unknown tool: -32602 whose message contains "unknown tool"; a missing name is -32602 too', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'make_coffee', arguments: { apiKey: 'k' } } });
    expect(r.status).toBe(200);
    expect(r.json.error.code).toBe(-32602);
    expect(r.json.error.message).toContain('unknown tool');
    expect(r.json.error.message).toContain('make_coffee');
    const m = await rpc({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { arguments: {} } });
    expect(m.json.error.code).toBe(-32602);
    expect(m.json.error.message).toContain('params.name');
  });
});

describe('HTTP methods', () => {
  it('GET and DELETE /mcp: 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      await res.text();
    }
  });

  it('PUT, PATCH and DELETE with a body of any type: 405 in JSON-RPC shape, never an internal error', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'])
      for (const type of ['application/json', 'application/json, text/plain', 'not a type']) {
        const res = await fetch(url, { method, headers: { 'content-type': type }, body: '{}' });
        expect(res.status, `${method} ${type}`).toBe(405);
        expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
      }
  });
});

describe('Content-Type', () => {
  it('a header that lists several types is read by its first: the request is answered', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), { 'content-type': 'application/json, text/plain' });
    expect(r.status).toBe(200);
    expect(r.json.result.tools.length).toBeGreaterThan(0);
  });

  it('a header that is no media type: -32700 naming the header, not -32603', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }), { 'content-type': 'not a type' });
    expect(r.status).toBe(200);
    expect(r.json.error.code).toBe(-32700);
    expect(r.json.error.message).toContain('Content-Type');
  });
});
