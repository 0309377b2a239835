import { expect } from 'vitest';
import type { RunningEmulator } from '../../../src/index.js';
import { startRoomBot, type AgentState, type BotOutput, type RoomBot, type RoomBotOptions } from '../../../src/services/platform/room/bot/index.js';
import type { JournalEntry } from '../../../src/core/journal/journal.js';
import { pcm16Wav } from '../../helpers/audio.js';
import { call } from '../../helpers/emulator.js';
import { ffmpegPcm16 } from '../../helpers/ffprobe.js';
import { spokenPcm } from '../conversation/conversation-helpers.js';

export const RATE = 48_000;
export const FRAME = 960;

export interface Transcript {
  speaker: 'user' | 'bot';
  segmentId: string;
  text: string;
  final: boolean;
  at: number;
}

/** A BotOutput that records everything the bot asks the room to publish, with its wall time. */
export function recorder() {
  const frames: { at: number; frame: Int16Array }[] = [];
  const states: { at: number; state: AgentState }[] = [];
  const transcripts: Transcript[] = [];
  const ends: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  const out: BotOutput = {
    audioFrame: (frame) => (frames.push({ at: performance.now(), frame }), wake()),
    agentState: (state) => (states.push({ at: performance.now(), state }), wake()),
    transcription: (t) => (transcripts.push({ ...t, at: performance.now() }), wake()),
    end: (reason) => (ends.push(reason), wake()),
  };
  /** Resolves once `ok()` holds (checked at every output and every 50 ms). */
  const until = (ok: () => boolean, what: string, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!ok()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => (cleanup(), reject(new Error(`timed out waiting for ${what}; states ${stateNames().join(',')}`))), timeoutMs);
      const poll = setInterval(check, 50);
      const cleanup = () => (clearTimeout(timer), clearInterval(poll), waiters.delete(check));
      waiters.add(check);
      check();
    });
  const stateNames = () => states.map((s) => s.state);
  /** The frames from `from` on, as one PCM16 buffer. */
  const audio = (from = 0) => Buffer.concat(frames.slice(from).map((f) => Buffer.from(f.frame.buffer, f.frame.byteOffset, f.frame.byteLength)));
  const finals = (speaker: 'user' | 'bot') => transcripts.filter((t) => t.speaker === speaker && t.final);
  return { out, frames, states, transcripts, ends, until, stateNames, audio, finals };
}

export type Recorder = ReturnType<typeof recorder>;

/** Starts a call (the session the room belongs to) and answers its journal entry, standing for the room connection's. */
export async function callWithEntry(
  emu: RunningEmulator,
  key: string,
  body: Record<string, unknown> = {},
): Promise<{ sessionId: string; entry: JournalEntry }> {
  const r = await call(`${emu.platformUrl}/v1/audio/assistant/start`, {
    json: { client_nonce: crypto.randomUUID(), ...body },
    headers: { 'x-api-key': key },
  });
  expect(r.status, r.text).toBe(200);
  const entry = emu.emulator.journal.list({ limit: 1 })[0]!;
  return { sessionId: r.body.data.session_id as string, entry };
}

export function startBot(emu: RunningEmulator, opts: Partial<RoomBotOptions> & { accountKey: string }, rec: Recorder): RoomBot {
  return startRoomBot(emu.emulator, { kind: 'call', sessionId: 'test-session', ...opts }, rec.out);
}

/** The emulator's own speech of `text` as a client's microphone has it: synthesized, then resampled by ffmpeg to 48 kHz. */
export async function micOf(emu: RunningEmulator, text: string, voice = 'male_calm'): Promise<Int16Array> {
  const { pcm } = await spokenPcm(emu.emulator, text, voice);
  const at48 = await ffmpegPcm16(Buffer.concat([pcm16Wav(pcm.length, 16_000).subarray(0, 44), pcm]), { ext: 'wav', rate: RATE });
  return new Int16Array(at48.buffer.slice(at48.byteOffset, at48.byteOffset + at48.byteLength));
}

export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round((ms * RATE) / 1000));
}

/** Feeds the microphone as 20 ms frames; in real time (one frame per 20 ms of wall time) when `realTime`. */
export async function feed(bot: RoomBot, pcm: Int16Array, opts: { realTime?: boolean; onFrame?: (at: number, index: number) => void } = {}): Promise<void> {
  const t0 = performance.now();
  for (let k = 0; k * FRAME < pcm.length; k++) {
    if (opts.realTime) {
      const due = t0 + k * 20;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    } else if (k % 10 === 0) await new Promise((r) => setImmediate(r));
    opts.onFrame?.(performance.now(), k);
    bot.userAudio(pcm.subarray(k * FRAME, (k + 1) * FRAME));
  }
}

/** `POST /_emulator/hear` on PCM16 mono 48 kHz, as a client recorded the bot's track. */
export async function hear(emu: RunningEmulator, pcm: Buffer, contentType = `audio/pcm;rate=${RATE}`) {
  const r = await call(`${emu.platformUrl}/_emulator/hear`, { method: 'POST', body: pcm, headers: { 'content-type': contentType } });
  expect(r.status, r.text).toBe(200);
  return r.body as { text: string; utterances: { full_text: string; heard_text: string; complete: boolean }[] };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
