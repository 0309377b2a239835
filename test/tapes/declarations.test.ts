import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/emulator.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir } from './helpers.js';

const post = (base: string, key: string, path: string, json: unknown) =>
  call(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(json) });

/** A call: start with a new nonce, one heartbeat naming the session the start made. */
async function callFlow(base: string, key: string) {
  const start = await post(base, key, '/v1/audio/assistant/start', { client_nonce: randomUUID() });
  const sessionId = JSON.stringify(start.body).match(/"session_id":"([^"]+)"/)?.[1];
  const beat = await post(base, key, '/v1/audio/assistant/heartbeat', { session_id: sessionId });
  return { start, sessionId, beat };
}

describe('tapes: what a service declares of its operations', () => {
  it("a tape's recorded_at is the recording emulator's clock (a moved clock is what the tape says)", async () => {
    const dir = tapeDir();
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      const at = Date.UTC(2031, 4, 6, 7, 8, 9);
      const moved = await call(`${recorder.platformUrl}/_emulator/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ set_ms: at, freeze: true }),
      });
      expect(moved.status).toBe(200);
      expect((await callFlow(recorder.platformUrl, REAL_KEY)).start.status).toBe(200);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    const tapes = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.'));
    expect(tapes.length).toBeGreaterThan(0);
    for (const f of tapes) expect(JSON.parse(readFileSync(join(dir, f), 'utf8')).recorded_at, f).toBe(new Date(Date.UTC(2031, 4, 6, 7, 8, 9)).toISOString());
    rmSync(dir, { recursive: true, force: true });
  });

  it('a call start matches whatever its client_nonce (declared volatile), and its session id is fresh and mapped back', async () => {
    const dir = tapeDir();
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    let recorded: Awaited<ReturnType<typeof callFlow>>;
    try {
      recorded = await callFlow(recorder.platformUrl, REAL_KEY);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    expect(recorded.start.status).toBe(200);
    expect(recorded.sessionId).toBeTruthy();
    expect(recorded.beat.status).toBe(200);
    const emu = await startReplayer(dir, { replayStrict: true });
    try {
      const replayed = await callFlow(emu.platformUrl, 'ci');
      expect(replayed.start.status).toBe(200);
      expect(replayed.sessionId).not.toBe(recorded.sessionId);
      expect(replayed.sessionId!.length).toBe(recorded.sessionId!.length);
      // The heartbeat names the fresh id: matched as the recorded one (strict replay: a miss would be a 500).
      expect(replayed.beat.status).toBe(200);
      expect(replayed.beat.body).toEqual(recorded.beat.body);
    } finally {
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
