import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAUSE_MS } from '../../../src/services/platform/room/bot/index.js';
import { emulatorForFile } from '../../helpers/emulator.js';
import { run } from '../../helpers/tools.js';
import { callWithEntry, FRAME, feed, hear, micOf, RATE, recorder, silence, sleep, startBot, type Recorder } from './bot-helpers.js';

/** The bot's audio goes through the stream guard: the pace and audio fault fields, a dropped room, and close(). */
const { emu, ctl } = emulatorForFile();
const ROLE = { role: 'support_agent', language: 'en' } as const;

/** The greeting said under `fault` (and a fast pace, so each test takes a second rather than five). */
async function greeting(key: string, fault: Record<string, number>): Promise<{ rec: Recorder; entryId: string; t0: number }> {
  const { sessionId, entry } = await callWithEntry(emu, key, { timbre: ROLE.role, language: 'en' });
  const rec = recorder();
  const bot = startBot(emu, { accountKey: key, sessionId, ...ROLE, entry, fault }, rec);
  const t0 = performance.now();
  bot.greet();
  await rec.until(() => rec.ends.length > 0 || (rec.finals('bot').length === 1 && rec.stateNames().at(-1) === 'listening'), 'the greeting');
  await sleep(100);
  bot.close();
  return { rec, entryId: entry.id, t0 };
}

/** Encodes PCM16 mono 48 kHz with ffmpeg, as a client would save what it received. */
async function ffmpegEncode(pcm: Buffer, args: string[], ext: string): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'room-bot-'));
  try {
    writeFileSync(join(dir, 'in.pcm'), pcm);
    await run('ffmpeg', ['-v', 'error', '-f', 's16le', '-ar', String(RATE), '-ac', '1', '-i', join(dir, 'in.pcm'), ...args, join(dir, `out.${ext}`)]);
    return readFileSync(join(dir, `out.${ext}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const zeroFrame = (f: Int16Array) => f.every((v) => v === 0);
const journal = async (id: string) => (await ctl.call('GET', `/journal/${id}`)).body;

describe('room bot: fault fields on its audio', () => {
  let clean: Recorder;

  it('rtf paces the track at that many times real time', async () => {
    clean = (await greeting('room-bot-rtf', { rtf: 5 })).rec;
    const frames = clean.frames;
    const spanMs = frames.at(-1)!.at - frames[0]!.at;
    const audioMs = frames.length * 20;
    expect(spanMs).toBeGreaterThan(audioMs / 5 - 40);
    expect(spanMs).toBeLessThan(audioMs / 2);
  });

  it('gap_ms at gap_at_ms: that much digital silence inside the audio, the rest intact; journaled', async () => {
    const { rec, entryId } = await greeting('room-bot-gap', { rtf: 5, gap_ms: 400, gap_at_ms: 1000 });
    expect(rec.frames.length).toBe(clean.frames.length + 20);
    // Frames 50..69 (1000 ms to 1400 ms) are the gap; the audio before and after is the clean greeting's.
    for (let k = 50; k < 70; k++) expect(zeroFrame(rec.frames[k]!.frame)).toBe(true);
    expect(Buffer.compare(rec.audio(0).subarray(0, 50 * FRAME * 2), clean.audio(0).subarray(0, 50 * FRAME * 2))).toBe(0);
    expect(Buffer.compare(rec.audio(70), clean.audio(50))).toBe(0);
    expect((await journal(entryId)).note).toContain('audio faults: gap_ms=400 at 1000 ms');
  });

  it('corrupt_bytes flips that many bytes of the PCM, never the first frame; journaled', async () => {
    const { rec, entryId } = await greeting('room-bot-corrupt', { rtf: 5, corrupt_bytes: 300 });
    expect(rec.frames.length).toBe(clean.frames.length);
    const got = rec.audio();
    const want = clean.audio();
    let differ = 0;
    for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) differ++;
    expect(differ).toBe(300);
    expect(Buffer.compare(got.subarray(0, FRAME * 2), want.subarray(0, FRAME * 2))).toBe(0);
    expect((await journal(entryId)).note).toContain('corrupt_bytes=300');
  });

  it('jitter_ms moves each frame by a seeded amount: the pace the journal states, the audio intact', async () => {
    const { rec, entryId } = await greeting('room-bot-jitter', { rtf: 5, jitter_ms: 40 });
    expect(Buffer.compare(rec.audio(), clean.audio())).toBe(0);
    const gaps = rec.frames.slice(1).map((f, k) => f.at - rec.frames[k]!.at);
    // Frames due earlier than the one before leave with it: bunched frames and longer gaps, unlike the even 4 ms of rtf 5.
    expect(gaps.filter((g) => g > 15).length).toBeGreaterThan(5);
    expect((await journal(entryId)).note).toMatch(/^paced rtf=5 jitter_ms=40: first audio after \d+ ms/);
  });

  it('duplicate_chunk=N sends frame N twice', async () => {
    const { rec } = await greeting('room-bot-dup', { rtf: 5, duplicate_chunk: 5 });
    expect(rec.frames.length).toBe(clean.frames.length + 1);
    expect(rec.frames[5]!.frame).toBe(rec.frames[4]!.frame);
    expect(Buffer.compare(rec.audio(6), clean.audio(5))).toBe(0);
  });

  it("the track's audio keeps the emulator's signature through Opus, as WebRTC carries it: hear finds the greeting", async () => {
    const opus = await ffmpegEncode(clean.audio(), ['-c:a', 'libopus', '-b:a', '32k'], 'ogg');
    const heard = await hear(emu, opus, 'audio/ogg');
    expect(heard.utterances.map((u) => [u.full_text, u.complete])).toEqual([['Hello, thank you for calling support. How can I help you today?', true]]);
  });

  it('ttfa_ms delays the first frame; stall_ms pauses the track once at stall_at_ms', async () => {
    const { rec, t0 } = await greeting('room-bot-ttfa', { rtf: 5, ttfa_ms: 400, stall_ms: 500, stall_at_ms: 600 });
    expect(rec.frames[0]!.at - t0).toBeGreaterThanOrEqual(400);
    const gaps = rec.frames.slice(1).map((f, k) => f.at - rec.frames[k]!.at);
    const longest = Math.max(...gaps);
    expect(longest).toBeGreaterThanOrEqual(480);
    // The stall comes once 600 ms of audio left (frame 30), not before.
    expect(gaps.indexOf(longest)).toBeGreaterThanOrEqual(29);
  });

  it('cut_after_chunks=N: N frames, then the room is dropped (end "fault"), nothing after', async () => {
    const { rec, entryId } = await greeting('room-bot-cut', { cut_after_chunks: 10 });
    expect(rec.frames).toHaveLength(10);
    expect(rec.ends).toEqual(['fault']);
    await sleep(200);
    expect(rec.frames).toHaveLength(10);
    expect((await journal(entryId)).note).toMatch(/^connection cut after 10 chunks \(fault\)/);
  });

  it('close_ws: the room drops as the bot is about to greet, before any audio', async () => {
    const { rec, entryId } = await greeting('room-bot-close-ws', { close_ws: 1011 });
    expect(rec.frames).toHaveLength(0);
    expect(rec.ends).toEqual(['fault']);
    expect((await journal(entryId)).note).toBe('room dropped before the greeting (fault close_ws=1011)');
  });

  it("the account's standing stream faults apply to its bot (those raw frames cannot carry are not read)", async () => {
    const key = 'room-bot-standing';
    expect((await ctl.putAccount(key, { stream_faults: { ttfa_ms: 300, rtf: 5, drop_final: 1 } })).status).toBe(200);
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, ...ROLE }, rec);
    const t0 = performance.now();
    bot.greet();
    await rec.until(() => rec.finals('bot').length === 1, 'the greeting');
    bot.close();
    expect(rec.frames[0]!.at - t0).toBeGreaterThanOrEqual(300);
    // `drop_final` belongs to hex audio with a final event: the track keeps its last frame.
    expect(Buffer.compare(rec.audio(), clean.audio())).toBe(0);
  });
});

describe('room bot: close() and the emulator clock', () => {
  it('close() mid-sentence: no frame after it, no timer left under the account', async () => {
    const key = 'room-bot-close';
    const { sessionId } = await callWithEntry(emu, key, { timbre: ROLE.role, language: 'en' });
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, sessionId, ...ROLE }, rec);
    const timers = async () => ((await ctl.accountState(key))?.pending_timers ?? []).map((t: { label: string }) => t.label);
    // The user speaks (voice without its ending silence): the pause rule's timer is armed.
    await feed(bot, (await micOf(emu, 'Just a moment please.')).subarray(0, 24_000));
    expect(await timers()).toContain('room bot utterance pause');
    bot.greet();
    await rec.until(() => rec.frames.length >= 10, 'a few frames');
    bot.close();
    const n = rec.frames.length;
    const states = rec.states.length;
    await sleep(300);
    expect(rec.frames).toHaveLength(n);
    expect(rec.states).toHaveLength(states);
    expect(await timers()).not.toContain('room bot utterance pause');
    // A closed bot takes nothing more.
    bot.greet();
    bot.userAudio(silence(100));
    await sleep(100);
    expect(rec.frames).toHaveLength(n);
  });

  it(`the pause rule: ${PAUSE_MS} ms on the emulator clock without audio ends an utterance (a muted microphone)`, async () => {
    await ctl.freeze(true);
    try {
      const rec = recorder();
      const bot = startBot(emu, { accountKey: 'room-bot-pause', ...ROLE }, rec);
      const mic = await micOf(emu, 'What is the weather like?');
      // The words, then nothing at all (no silence frames): the silence rule cannot end it.
      await feed(bot, mic.subarray(0, mic.length - 48 * 200));
      await sleep(300);
      expect(rec.stateNames()).toEqual(['listening']);
      await ctl.advance(PAUSE_MS - 100);
      await sleep(100);
      expect(rec.stateNames()).toEqual(['listening']);
      await ctl.advance(200);
      await rec.until(() => rec.finals('bot').length === 1, 'the reply');
      bot.close();
      expect(rec.stateNames().slice(0, 3)).toEqual(['listening', 'thinking', 'speaking']);
      expect(rec.finals('bot')[0]!.text).toBe('Tomorrow will be sunny with a light breeze.');
    } finally {
      await ctl.freeze(false);
    }
  });
});
