/** Pace and audio faults on a conversation socket's reply audio (binary MP3 frames), through its stream guard. */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { connect, decodeMp3 } from './conversation-helpers.js';

const { emu, ctl } = emulatorForFile();
const TEXT = '/api/v1/audio/conversation/stream-text';

async function turn(key: string, fault?: string) {
  await ctl.putAccount(key, { balance_micro: 1_000_000 });
  const url = `${emu.platformUrl.replace(/^http/, 'ws')}${TEXT}?api_key=${key}`;
  const started = performance.now();
  const c = await connect(url, fault ? { 'x-emulator-fault': fault } : {});
  let firstAudio = 0;
  c.ws.on('message', (_d, binary) => {
    if (binary) firstAudio ||= performance.now() - started;
  });
  c.sendJson({ voice_id: 'english_tutor', text_input: 'Tell me a story about the sea.' });
  await c.closed;
  return { c, firstAudio, total: performance.now() - started, done: c.events().at(-1) };
}

describe('paced conversation reply audio', () => {
  it('ttfa_ms and rtf=1 hold the reply audio to real time; the audio is the same', async () => {
    const fast = await turn('conv-pace-fast');
    const paced = await turn('conv-pace-slow', 'ttfa_ms=500;rtf=1');
    expect(paced.c.audio().equals(fast.c.audio())).toBe(true);
    expect(paced.firstAudio).toBeGreaterThanOrEqual(500);
    const audioMs = paced.done.audio_duration_sec * 1000;
    expect(paced.total).toBeGreaterThanOrEqual(0.9 * audioMs);
    expect(fast.total).toBeLessThan(paced.total / 2);
  });

  it('gap_ms inserts silence into the reply; the done event reports the longer audio', async () => {
    const fast = await turn('conv-gap-a');
    const gapped = await turn('conv-gap-b', 'gap_ms=600;gap_at_ms=300');
    expect(Math.round((gapped.done.audio_duration_sec - fast.done.audio_duration_sec) * 1000)).toBeGreaterThanOrEqual(550);
    const decoded = await decodeMp3(gapped.c.audio());
    expect(decoded.errors).toBe(0);
  });
});
