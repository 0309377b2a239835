/** Pace and audio faults on a conversation socket's reply audio (binary MP3 frames), through its stream guard. */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/app.js';
import { REALISTIC_PACE } from '../../src/core/stream/shaping.js';
import { control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { connect, decodeMp3 } from './conversation/conversation-helpers.js';

const { emu } = emulatorForFile();
const TEXT = '/api/v1/audio/conversation/stream-text';

async function turn(key: string, fault?: string, platformUrl = emu.platformUrl) {
  await control(platformUrl).putAccount(key, { balance_micro: 1_000_000 });
  const url = `${platformUrl.replace(/^http/, 'ws')}${TEXT}?api_key=${key}`;
  const started = performance.now();
  const c = await connect(url, fault ? { 'x-emulator-fault': fault } : {});
  let firstAudio = 0;
  let lastAudio = 0;
  c.ws.on('message', (_d, binary) => {
    if (!binary) return;
    lastAudio = performance.now();
    firstAudio ||= lastAudio;
  });
  const metaSent = performance.now();
  c.sendJson({ voice_id: 'english_tutor', text_input: 'Tell me a story about the sea.' });
  await c.closed;
  return {
    c,
    firstAudio: firstAudio - started,
    /** The first audio after the meta message left the client (before the server's turn began). */
    firstAudioAfterMeta: firstAudio - metaSent,
    /** From the first audio frame to the last, as received. */
    audioSpan: lastAudio - firstAudio,
    total: performance.now() - started,
    done: c.events().at(-1),
  };
}

/** Milliseconds of MP3 at the reply's 64 kbit/s in all audio frames but the last (what the pace waits for). */
const msBeforeLastFrame = (c: Awaited<ReturnType<typeof turn>>['c']) =>
  (c.messages
    .filter((m) => m.kind === 'audio')
    .slice(0, -1)
    .reduce((n, m) => n + m.audio!.length, 0) *
    8) /
  64;

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

describe('--latency realistic paces the conversation reply audio with the profile of every stream', () => {
  let slow: RunningEmulator;
  beforeAll(async () => {
    slow = await startTestEmulator({ latency: 'realistic' });
  });
  afterAll(() => slow.close());

  it('the reply audio waits ttfa_ms after its synthesis began and plays out at rtf; an unpaced run is well faster', async () => {
    const { ttfa_ms: ttfa, rtf, jitter_ms: jitter } = REALISTIC_PACE as Required<typeof REALISTIC_PACE>;
    const paced = await turn('conv-realistic', undefined, slow.platformUrl);
    const fast = await turn('conv-realistic-none');
    expect(paced.c.audio().equals(fast.c.audio())).toBe(true);
    // Recognition is skipped in text mode; the language model's delays come first, then the pace's ttfa.
    const tokens = [...paced.done.reply_text].length;
    expect(paced.firstAudioAfterMeta).toBeGreaterThanOrEqual(600 + 20 * (tokens - 1) + ttfa);
    expect(paced.done.first_audio_ms).toBeGreaterThanOrEqual(paced.done.first_token_ms + ttfa);
    // Each frame leaves once the audio before it would have played at rtf (give or take the jitter).
    const paceMs = msBeforeLastFrame(paced.c) / rtf;
    expect(paced.audioSpan).toBeGreaterThanOrEqual(paceMs - 2 * jitter - 5);
    expect(fast.audioSpan).toBeLessThan(paced.audioSpan / 2);
    // The guard paced it: the socket's journal entry says so.
    const entry = (await control(slow.platformUrl).journal({ path: TEXT, limit: 1 })).body.entries[0];
    const first = /^paced ttfa_ms=350 rtf=2 jitter_ms=20: first audio after (\d+) ms/.exec(entry.note);
    expect(first).not.toBeNull();
    expect(Number(first![1])).toBeGreaterThanOrEqual(ttfa);
  });
});
