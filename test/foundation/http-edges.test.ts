import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { rawRequest } from '../helpers/raw.js';

const { emu } = emulatorForFile();

describe('requests Node would answer bare or not at all get the shape of what they reached', () => {
  it('HTTP/1.1 without Host: 400 naming the header, in each service shape', async () => {
    const speech = await rawRequest(emu.speechUrl, 'GET /v1/t2a_v2 HTTP/1.1\r\nAuthorization: Bearer k\r\n\r\n');
    expect(speech.status).toBe(400);
    expect(JSON.parse(speech.body).base_resp).toMatchObject({ status_code: 2013, status_msg: expect.stringMatching(/Host header is required/) });
    const platform = await rawRequest(emu.platformUrl, 'GET /v1/files/list HTTP/1.1\r\nX-API-Key: k\r\n\r\n');
    expect(platform.status).toBe(400);
    expect(JSON.parse(platform.body)).toMatchObject({ error_code: 10001, succeed: false, error_message: expect.stringMatching(/Host header/) });
    const controlPlane = await rawRequest(emu.platformUrl, 'GET /_emulator/health HTTP/1.1\r\n\r\n');
    expect(JSON.parse(controlPlane.body)).toEqual({ error: { message: expect.stringMatching(/Host header/) } });
  });

  it('HTTP/1.0 without Host is still served', async () => {
    const res = await rawRequest(emu.platformUrl, 'GET /_emulator/health HTTP/1.0\r\n\r\n');
    expect(res.status).toBe(200);
  });

  it('CONNECT is answered 405 in the service shape, not dropped', async () => {
    for (const base of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      const res = await rawRequest(base, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expect(res.answered, base).toBe(true);
      expect(res.status, base).toBe(405);
      expect(res.body, base).toMatch(/CONNECT method is not supported/);
    }
  });

  it('a 431 on the control plane and on /mcp comes in their own shapes', async () => {
    const big = `X-Big: ${'a'.repeat(17 * 1024)}\r\n`;
    for (const base of [emu.speechUrl, emu.platformUrl]) {
      const res = await rawRequest(base, `GET /_emulator/health HTTP/1.1\r\nHost: x\r\n${big}\r\n`);
      expect(res.status).toBe(431);
      expect(JSON.parse(res.body)).toEqual({ error: { message: expect.stringMatching(/larger than 16 KB/) } });
    }
    const mcp = await rawRequest(emu.platformUrl, `POST /mcp HTTP/1.1\r\nHost: x\r\n${big}Content-Length: 2\r\n\r\n{}`);
    expect(mcp.status).toBe(431);
    expect(JSON.parse(mcp.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/16 KB/) } });
  });

  it('a bad %-escape on the REST sessions route answers HTTP 200 with the call family code 20003', async () => {
    for (const path of ['/api/v1/audio/sessions/%', '/api/v1/audio/sessions/%zz']) {
      const res = await call(`${emu.platformUrl}${path}`, { method: 'DELETE', headers: { 'x-api-key': 'edges' } });
      expect(res.status, path).toBe(200);
      expect(res.body, path).toMatchObject({ error_code: 20003, succeed: false, data: null });
    }
  });
});
