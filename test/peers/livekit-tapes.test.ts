/**
 * Peer: LiveKit Agents' MiniMax TTS plugin, unmodified, streams through a recording emulator (its speech socket
 * forwarded to an upstream emulator with its own seed and voices), then through a replaying one with that upstream
 * gone: the same frames, sample for sample, and the replaying emulator's journal names the tape.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TTS } from '@livekit/agents-plugin-minimax';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { collect, initLogger } from './livekit-plugin.js';

const dir = mkdtempSync(join(tmpdir(), 'tapes-livekit-'));
const PARTS = ['Hello from the recorded stream. ', 'It has a second sentence.'];

beforeAll(() => initLogger());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function streamed(baseUrl: string, key: string) {
  const tts = new TTS({ apiKey: key, baseUrl });
  const errors: Error[] = [];
  tts.on('error', (e) => errors.push(e.error));
  const s = tts.stream();
  for (const p of PARTS) s.pushText(p);
  s.flush();
  s.endInput();
  const frames = await collect(s);
  s.close();
  return { frames, errors };
}

describe('the LiveKit plugin against a replaying emulator', () => {
  it('streams the recorded audio, sample for sample, with the upstream gone', async () => {
    const upstream = await startTestEmulator({ seed: 'livekit-upstream' });
    let recorded: Awaited<ReturnType<typeof streamed>>;
    const recorder = await startTestEmulator({ record: dir, upstreamSpeech: upstream.speechUrl });
    try {
      recorded = await streamed(recorder.speechUrl, 'sk-livekit-real-key');
      expect(recorded.errors).toEqual([]);
      expect(recorded.frames.samples).toBeGreaterThan(24000);
      for (let i = 0; i < 250 && !readdirSync(dir).some((f) => f.endsWith('.json')); i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await recorder.close();
      await upstream.close();
    }
    let replayer: RunningEmulator | undefined;
    try {
      replayer = await startTestEmulator({ seed: 'livekit-replayer', replay: dir, replayStrict: true, replaySpeed: 0 });
      const again = await streamed(replayer.speechUrl, 'ci-key');
      expect(again.errors).toEqual([]);
      expect(again.frames.sampleRates).toEqual(recorded.frames.sampleRates);
      expect(again.frames.pcm.equals(recorded.frames.pcm)).toBe(true);
      const entry = await replayer.control.journal.list({ path: '/ws/v1/t2a_v2', limit: 1 });
      expect(entry[0]!.tape).toMatchObject({ mode: 'replayed' });
    } finally {
      await replayer?.close();
    }
  }, 60_000);
});
