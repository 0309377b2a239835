import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { startTestEmulator } from '../helpers/emulator.js';

/**
 * A request answered before its body was read (multipart without a boundary) must not hold up the next
 * request on the same keep-alive connection: its body is read and dropped. Before, the next request
 * waited for the body timeout and got a 408. The body timeout is short here so the test fails fast.
 */
let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ bodyTimeoutMs: 2000 });
});
afterAll(() => emu.close());

const ROUTES: [service: 'speech' | 'platform', path: string][] = [
  ['speech', '/v1/speech_to_text'],
  ['speech', '/v1/files/upload'],
  ['platform', '/v1/files/upload'],
  ['platform', '/v1/audio/ai-detect'],
];

describe('a body left unread by an early answer', () => {
  for (const [service, path] of ROUTES) {
    it(`${service} ${path}: the next request on the connection gets its own answer`, async () => {
      const client = new Client(service === 'speech' ? emu.speechUrl : emu.platformUrl, { connections: 1 } as Client.Options);
      try {
        const headers = { authorization: 'Bearer k', 'x-api-key': 'k', 'content-type': 'multipart/form-data' };
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await client.request({ path, method: 'POST', headers, body: Buffer.alloc(320_000, 65) });
          statuses.push(r.statusCode);
          const text = await r.body.text();
          expect(text).toMatch(/boundary|multipart|could not be read/i);
        }
        expect(statuses).not.toContain(408);
        const health = await client.request({ path: '/_emulator/health', method: 'GET' });
        expect(health.statusCode).toBe(200);
        await health.body.text();
      } finally {
        await client.close();
      }
    });
  }
});
