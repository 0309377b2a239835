import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { rawRequest } from '../helpers/raw.js';

const { emu } = emulatorForFile();

/** Requests Node's HTTP parser refuses before any route runs. */
const REFUSED: Record<string, { bytes: (path: string) => Buffer; status: number; rule: RegExp }> = {
  'a raw non-ASCII byte in the path': {
    bytes: (path) => Buffer.concat([Buffer.from(`GET ${path}`), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]),
    status: 400,
    rule: /character that is not allowed|not valid HTTP/,
  },
  'both Content-Length and Transfer-Encoding': {
    bytes: (path) =>
      Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      ),
    status: 400,
    rule: /Transfer-Encoding/,
  },
  'headers over 16 KB': {
    bytes: (path) => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`),
    status: 431,
    rule: /larger than 16 KB/,
  },
};

describe("requests refused by the HTTP parser are answered in the listener's service shape", () => {
  for (const [name, c] of Object.entries(REFUSED)) {
    it(`speech and speech backup: ${name} → base_resp 2013`, async () => {
      for (const base of [emu.speechUrl, emu.speechBackupUrl]) {
        const res = await rawRequest(base, c.bytes('/v1/t2a_v2'));
        expect(res.answered).toBe(true);
        expect(res.status).toBe(c.status);
        expect(res.headers['content-type']).toMatch(/application\/json/);
        const body = JSON.parse(res.body);
        expect(body.base_resp.status_code).toBe(2013);
        expect(body.base_resp.status_msg).toMatch(c.rule);
        expect(typeof body.trace_id).toBe('string');
        expect(res.headers['trace-id']).toBe(body.trace_id);
      }
    });

    it(`platform: ${name} → envelope 10001`, async () => {
      const res = await rawRequest(emu.platformUrl, c.bytes('/v1/voice/list'));
      expect(res.answered).toBe(true);
      expect(res.status).toBe(c.status);
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ error_code: 10001, succeed: false, data: null });
      expect(body.error_message).toMatch(c.rule);
    });
  }
});

describe('a bad %-escape answers in the shape of what it reached', () => {
  it('the control plane answers its own shape on every listener', async () => {
    for (const base of [emu.speechUrl, emu.platformUrl]) {
      const res = await call(`${base}/_emulator/faults/%zz`, { method: 'DELETE' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message: expect.stringMatching(/not a valid url/) } });
    }
  });

  it('voice routes answer HTTP 200 with the envelope', async () => {
    for (const [method, path] of [
      ['DELETE', '/v1/voice/%zz'],
      ['GET', '/v1/voice/list%zz'],
      ['POST', '/v1/voice/save%zz'],
    ] as const) {
      const res = await call(`${emu.platformUrl}${path}`, { method, headers: { 'x-api-key': 'parser-key' } });
      expect(res.status, path).toBe(200);
      expect(res.body, path).toMatchObject({ error_code: 10001, succeed: false, data: null });
    }
  });

  it('DELETE /v1/voice/ (empty id) is a parameter error at HTTP 200, after the key check', async () => {
    const res = await call(`${emu.platformUrl}/v1/voice/`, { method: 'DELETE', headers: { 'x-api-key': 'parser-key' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error_code: 10001, succeed: false, data: null });
    expect(res.body.error_message).toMatch(/voice_id/);
    const noKey = await call(`${emu.platformUrl}/v1/voice/`, { method: 'DELETE' });
    expect(noKey.status).toBe(200);
    expect(noKey.body.succeed).toBe(false);
    expect(noKey.body.error_code).not.toBe(10001);
  });
});
