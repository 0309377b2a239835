import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEmulator, type RunningEmulator } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { loggerOptions } from '../../src/logger.js';

const lines: string[] = [];
let emu: RunningEmulator;
beforeAll(async () => {
  const logger = pino(loggerOptions('debug'), { write: (line: string) => void lines.push(line) });
  emu = await runEmulator(configSchema.parse({ speechPort: 0, speechBackupPort: 0, platformPort: 0, seed: 't' }), logger);
});
afterAll(() => emu.close());

/** A raw WebSocket client: the handshake, then whatever bytes the test writes. */
async function rawSocket(base: string, path: string, headers: string): Promise<{ sock: Socket; received: () => Buffer; ended: Promise<'end' | string> }> {
  const { hostname, port } = new URL(base);
  const sock = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  let error: string | null = null;
  sock.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<'end' | string>((resolve) => {
    sock.on('end', () => resolve(error ?? 'end'));
    sock.on('error', (e: Error & { code?: string }) => {
      error = e.code ?? e.message;
      resolve(error);
    });
  });
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n${headers}\r\n`,
  );
  for (let i = 0; i < 100 && !Buffer.concat(chunks).includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 20));
  expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 101/);
  return { sock, received: () => Buffer.concat(chunks), ended };
}

/** The close code of the first close frame the server sent after the handshake, if any. */
function closeCode(bytes: Buffer): number | null {
  let i = bytes.indexOf('\r\n\r\n') + 4;
  while (i + 2 <= bytes.length) {
    const op = bytes[i]! & 0x0f;
    let len = bytes[i + 1]! & 0x7f;
    let at = i + 2;
    if (len === 126) ((len = bytes.readUInt16BE(at)), (at += 2));
    else if (len === 127) ((len = Number(bytes.readBigUInt64BE(at))), (at += 8));
    if (op === 8) return at + 2 <= bytes.length ? bytes.readUInt16BE(at) : null;
    i = at + len;
  }
  return null;
}

/** A masked binary frame header claiming `length` bytes. */
function frameHeader(length: number): Buffer {
  const h = Buffer.alloc(14);
  h[0] = 0x82;
  h[1] = 0x80 | 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  return h; // the 4 mask bytes are zeros
}

describe('a frame over 8 MiB on the conversation socket', () => {
  it('gets the 1009 close frame, then an orderly end: the client can go on writing, no reset', async () => {
    const c = await rawSocket(emu.platformUrl, '/api/v1/audio/conversation/stream', 'X-API-Key: proto-key\r\n');
    c.sock.write(frameHeader(9 * 1024 * 1024));
    const filler = Buffer.alloc(64 * 1024);
    // The client keeps sending its frame while the server refuses it, as a loaded client would.
    for (let i = 0; i < 40 && closeCode(c.received()) === null; i++) {
      c.sock.write(filler);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(closeCode(c.received())).toBe(1009);
    for (let i = 0; i < 20; i++) {
      if (!c.sock.writable) break;
      c.sock.write(filler);
      await new Promise((r) => setTimeout(r, 10));
    }
    c.sock.end();
    expect(await c.ended).toBe('end');
  });
});

describe("a client's protocol error is its own mistake", () => {
  it('is logged at debug without a stack; no error line', async () => {
    lines.length = 0;
    for (const path of ['/api/v1/audio/conversation/stream', '/api/v1/audio/conversation/stream-text', '/v1/speech-to-text/stream']) {
      const c = await rawSocket(emu.platformUrl, path, 'X-API-Key: proto-key\r\n');
      // Opcode 3 is reserved: a protocol error (1002).
      c.sock.write(Buffer.from([0x83, 0x80, 0, 0, 0, 0]));
      await c.ended;
      c.sock.destroy();
    }
    const speech = await rawSocket(emu.speechUrl, '/ws/v1/t2a_v2', 'Authorization: Bearer proto-key\r\n');
    speech.sock.write(Buffer.from([0x83, 0x80, 0, 0, 0, 0]));
    await speech.ended;
    speech.sock.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string } });
    expect(parsed.filter((l) => l.level >= 40)).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/"stack"/);
    expect(parsed.filter((l) => /client protocol error/.test(l.msg)).length).toBe(4);
  });
});
