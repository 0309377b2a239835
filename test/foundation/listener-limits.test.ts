import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { rawRequest } from '../helpers/raw.js';

/** A small body timeout and connection cap, so stalls and floods show within a test. */
const { emu } = emulatorForFile({ start: { bodyTimeoutMs: 600, maxConnections: 5 } });

const stalledUpload = (path: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\nabc`;

describe('a stalled request body is cut after the body timeout on every listener', () => {
  it('platform: a stalled multipart upload, ai-detect body and chunked body answer 408 in the envelope', async () => {
    for (const bytes of [
      stalledUpload('/v1/files/upload', 'X-API-Key: stall\r\n'),
      `POST /v1/ai-detect HTTP/1.1\r\nHost: x\r\nX-API-Key: stall\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"audio`,
      `POST /v1/voice/save HTTP/1.1\r\nHost: x\r\nX-API-Key: stall\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":`,
    ]) {
      const started = Date.now();
      const res = await rawRequest(emu.platformUrl, bytes, { waitMs: 4000 });
      expect(res.answered).toBe(true);
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body)).toMatchObject({
        error_code: 10001,
        succeed: false,
        data: null,
        error_message: expect.stringMatching(/not received in time/),
      });
      expect(Date.now() - started).toBeLessThan(3000);
    }
  });

  it('speech and its backup: a stalled body answers 408 with base_resp', async () => {
    for (const base of [emu.speechUrl, emu.speechBackupUrl]) {
      const res = await rawRequest(
        base,
        `POST /v1/t2a_v2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer stall\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"text`,
        { waitMs: 4000 },
      );
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body).base_resp.status_msg).toMatch(/not received in time/);
    }
  });

  it('a request sent whole is not affected', async () => {
    const res = await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'stall' } });
    expect(res.status).toBe(200);
  });
});

function open(base: string): Promise<Socket> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

describe('connections over the cap of a listener are refused cleanly', () => {
  it('platform: 503 in the envelope; the control plane in its own shape; a place frees when a connection closes', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => open(emu.platformUrl)));
    await new Promise((r) => setTimeout(r, 50));
    const refused = await rawRequest(emu.platformUrl, 'GET /v1/voice/list HTTP/1.1\r\nHost: x\r\nX-API-Key: cap\r\n\r\n');
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toMatchObject({
      error_code: 10000,
      succeed: false,
      data: null,
      error_message: expect.stringMatching(/maximum of 5 open connections/),
    });
    const control = await rawRequest(emu.platformUrl, 'GET /_emulator/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(control.status).toBe(503);
    expect(JSON.parse(control.body)).toEqual({ error: { message: expect.stringMatching(/maximum of 5/) } });
    const speech = await Promise.all(Array.from({ length: 5 }, () => open(emu.speechUrl)));
    await new Promise((r) => setTimeout(r, 50));
    const t2a = await rawRequest(emu.speechUrl, 'GET /v1/t2a_v2 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(t2a.status).toBe(503);
    expect(JSON.parse(t2a.body).base_resp).toMatchObject({ status_code: 1000 });
    for (const s of [...held, ...speech]) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const after = await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'cap', connection: 'close' } });
    expect(after.status).toBe(200);
  });
});
