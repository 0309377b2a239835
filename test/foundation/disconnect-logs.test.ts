import pino from 'pino';
import WebSocket from 'ws';
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

/** Opens a socket, sends `first`, and drops the connection (no close frame) at the `leaveAt`-th message. */
function leaveSocket(url: string, headers: Record<string, string>, first: unknown[], leaveAt = 1): Promise<void> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    let seen = 0;
    ws.on('open', () => first.forEach((m) => ws.send(Buffer.isBuffer(m) ? m : JSON.stringify(m))));
    ws.on('message', () => {
      if (++seen === leaveAt) ws.terminate();
    });
    ws.on('close', () => resolve());
    ws.on('error', () => undefined);
  });
}

/** 1 s of a 300 Hz tone as 16 kHz PCM16: speech enough for recognition and the voice conversation. */
function tone(): Buffer {
  const b = Buffer.alloc(32000);
  for (let i = 0; i < 16000; i++) b.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 16000)), i * 2);
  return b;
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
        const platformWs = emu.platformUrl.replace(/^http/, 'ws');
        await leaveSocket(
          `${platformWs}/api/v1/audio/conversation/stream-text?api_key=leave-key`,
          {},
          [{ voice_id: 'default', text_input: LONG.slice(0, 300) }],
          2,
        );
        await leaveSocket(`${platformWs}/api/v1/audio/conversation/stream?api_key=leave-key`, {}, [{ voice_id: 'default' }, tone(), tone()], 1);
        await leaveSocket(
          `${platformWs}/v1/speech-to-text/stream?api_key=leave-key`,
          {},
          [{ meta: { audio_format: 'pcm16', language: 'en' } }, tone(), tone()],
          1,
        );
        await leaveSocket(
          `${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`,
          { authorization: 'Bearer leave-key' },
          [
            { event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: 'male-qn-qingse' } },
            { event: 'task_continue', text: LONG },
          ],
          3,
        );
      }
      // a request after the others: every earlier one has been handled by then
      expect((await fetch(`${emu.speechUrl}/_emulator/health`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await emu.close();
    }
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg?: string; err?: { stack?: string }; end?: string; closed_by?: string });
    // A connection cut by the fault before the client left is the one warning (core/http/request-log.ts).
    const loud = parsed.filter((l) => (l.level >= 40 && l.end !== 'cut') || l.err?.stack || (l.level > 20 && /prematurely|terminated/.test(l.msg ?? '')));
    expect(loud.map((l) => `${l.level} ${l.msg}`)).toEqual([]);
    // Every client that left is in the log at info, as such.
    expect(parsed.filter((l) => l.level === 30 && (l.end === 'left' || l.closed_by === 'client')).length).toBeGreaterThanOrEqual(3 * 5);
  });
});
