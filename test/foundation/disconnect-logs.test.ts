import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { runEmulator } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { loggerOptions } from '../../src/logger.js';

const LONG = 'A long text that keeps streaming for a while. '.repeat(120);

/** Starts a request, reads its first bytes, then drops the connection. */
async function leaveEarly(url: string, init: RequestInit): Promise<void> {
  const ac = new AbortController();
  const res = await fetch(url, { ...init, method: 'POST', signal: ac.signal });
  const reader = res.body!.getReader();
  await reader.read();
  ac.abort();
  await reader.read().catch(() => undefined);
}

describe('a client that leaves mid-stream is routine', () => {
  it('is logged at debug at most: no warn or error line, no stack', async () => {
    const lines: string[] = [];
    const logger = pino(loggerOptions('debug'), { write: (line: string) => void lines.push(line) });
    const config = configSchema.parse({ speechPort: 0, speechBackupPort: 0, platformPort: 0, seed: 't' });
    const emu = await runEmulator(config, logger);
    try {
      for (let i = 0; i < 3; i++) {
        await leaveEarly(`${emu.speechUrl}/v1/t2a_v2`, {
          headers: { authorization: 'Bearer leave-key', 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'speech-02-turbo', text: LONG, stream: true, voice_setting: { voice_id: 'male-qn-qingse' } }),
        });
        await leaveEarly(`${emu.platformUrl}/v1/text-to-speech/stream`, {
          headers: { 'x-api-key': 'leave-key', 'content-type': 'application/json' },
          body: JSON.stringify({ voice_id: 'female_bright', generate_text: LONG.slice(0, 480) }),
        });
        await leaveEarly(`${emu.platformUrl}/v1/text-to-speech`, {
          headers: { 'x-api-key': 'leave-key', 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=50' },
          body: JSON.stringify({ voice_id: 'female_bright', generate_text: LONG.slice(0, 480) }),
        });
      }
      // a request after the others: every earlier one has been handled by then
      expect((await fetch(`${emu.speechUrl}/_emulator/health`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await emu.close();
    }
    const loud = lines.map((l) => JSON.parse(l) as { level: number; msg?: string; err?: { stack?: string } }).filter((l) => l.level >= 40 || l.err?.stack || (l.level > 20 && /prematurely|terminated/.test(l.msg ?? '')));
    expect(loud.map((l) => `${l.level} ${l.msg}`)).toEqual([]);
  });
});
