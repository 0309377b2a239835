import { describe, expect, test } from 'vitest';
import type { RunningEmulator } from '../../../src/index.js';
import { call, emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { ffprobe } from '../../helpers/ffprobe.js';
import { accountState, connect, decodeMp3, flush, sendFrames, silencePcm, spokenPcm, wsUrl } from './conversation-helpers.js';
import { startsOnFrameSync } from '../../helpers/mp3.js';

const PATH = '/api/v1/audio/conversation/stream';
const { emu, ctl } = emulatorForFile();

const types = (events: any[]) => events.map((e) => e.type);

/** Milliseconds of (near-)digital silence at the end of PCM16 16 kHz audio. */
function trailingSilentMs(pcm: Buffer): number {
  let n = pcm.length / 2;
  while (n > 0 && Math.abs(pcm.readInt16LE((n - 1) * 2)) < 64) n--;
  return Math.round(((pcm.length / 2 - n) * 1000) / 16000);
}

describe("conversation stream: a full voice turn with the emulator's own speech", () => {
  test('partials while audio arrives, asr_final = spoken text, reply MP3 frames that decode, done, billing', async () => {
    const key = 'conv-voice';
    await ctl.putAccount(key, { balance_micro: 10_000_000 });
    const spoken = 'Hello, what is the weather like tomorrow?';
    const { pcm } = await spokenPcm(emu.emulator, spoken);

    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
    const created = await c.waitFor('session_created');
    expect(created.session_id).toMatch(/^conv_[0-9a-f]{24}$/);

    await sendFrames(c.ws, pcm);
    await flush(c.ws);
    const beforeFinal = c.events().filter((e) => e.type === 'asr_partial');
    c.sendJson({ is_final: true });
    const done = await c.waitFor('done');
    const events = c.events();

    // asr_partial events came while audio was arriving: several, each growing, each a prefix of the final.
    const partials = events.filter((e) => e.type === 'asr_partial').map((e) => e.asr_text as string);
    expect(beforeFinal.length).toBe(partials.length);
    expect(partials.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < partials.length; i++) expect(partials[i]!.length).toBeGreaterThan(partials[i - 1]!.length);
    for (const p of partials) expect(spoken.startsWith(p)).toBe(true);
    expect(events.find((e) => e.type === 'asr_final').asr_text).toBe(spoken);

    // Order: session_created, asr_partial…, asr_final, llm_first_token, binary…, done.
    const order = c.messages.map((m) => (m.kind === 'audio' ? 'binary' : m.event.type));
    const squeezed = order.filter((t, i) => i === 0 || t !== order[i - 1]);
    expect(squeezed).toEqual(['session_created', 'asr_partial', 'asr_final', 'llm_first_token', 'binary', 'done']);

    // The fixture's rule for "hello" answers; the first token is its first character.
    expect(done.reply_text).toBe('Hello! How can I help you today?');
    expect(events.find((e) => e.type === 'llm_first_token').first_token).toBe('H');

    // Raw MP3, whole frames per message, decoding to the reported duration at 24 kHz.
    const chunks = c.messages.filter((m) => m.kind === 'audio').map((m) => m.audio!);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(startsOnFrameSync(chunk)).toBe(true);
    const mp3 = c.audio();
    const decoded = await decodeMp3(mp3);
    expect(decoded.errors).toBe(0);
    expect(decoded.sampleRate).toBe(24000);
    expect(Math.abs(decoded.durationMs - done.audio_duration_sec * 1000)).toBeLessThanOrEqual(1);
    const probe = (await ffprobe(mp3, { ext: 'mp3' })).raw;
    expect(probe.streams[0]).toMatchObject({ codec_name: 'mp3', sample_rate: '24000', channels: 1, bit_rate: '64000' });

    // Timing fields: honest, whole milliseconds, in a consistent order.
    for (const f of ['first_token_ms', 'first_audio_ms', 'asr_ms', 'llm_ms', 'tts_ms', 'total_ms']) {
      expect(Number.isInteger(done[f]), f).toBe(true);
      expect(done[f], f).toBeGreaterThanOrEqual(0);
    }
    expect(done.asr_ms).toBeLessThanOrEqual(done.first_token_ms);
    expect(done.first_token_ms).toBeLessThanOrEqual(done.first_audio_ms);
    expect(done.first_audio_ms).toBeLessThanOrEqual(done.total_ms);
    expect(done.tts_ms).toBeLessThanOrEqual(done.total_ms);

    // Billed: conversation_audio_second (1000 micro) × audio_duration_sec.
    const account = await ctl.account(key);
    expect(account.body.balance_micro).toBe(10_000_000 - Math.round(1000 * done.audio_duration_sec));

    // The journal shows the socket's frames.
    c.ws.close();
    await c.closed;
    const journal = await ctl.journal({ path: PATH, limit: 1 });
    const entry = journal.body.entries?.[0] ?? journal.body[0];
    expect(entry.ws_frames_total).toBeGreaterThan(chunks.length);
    expect(entry.ws_frames.some((f: any) => f.dir === 'out' && f.event === 'done')).toBe(true);
  });
});

describe('conversation stream: several turns, and utterances that end by themselves', () => {
  test('turns on one connection: is_final, then a pause of 1.5 s on the emulator clock, then 1 s of trailing silence', async () => {
    const key = 'conv-turns';
    const goodbye = await spokenPcm(emu.emulator, 'Goodbye then.');
    const weather = await spokenPcm(emu.emulator, 'Any weather news?');
    const other = await spokenPcm(emu.emulator, 'Tell me a story.');
    // A REST session of this key is taken up, and its turns are recorded there.
    const rest = await call(`${emu.platformUrl}/api/v1/audio/sessions`, { json: { voice_id: 'english_tutor' }, headers: { 'x-api-key': key } });
    const sessionId = rest.body.data.session_id as string;
    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ voice_id: 'english_tutor', session_id: sessionId });
    expect((await c.waitFor('session_created')).session_id).toBe(sessionId);
    await ctl.freeze(true);
    try {
      // Turn 1: explicit is_final.
      await sendFrames(c.ws, goodbye.pcm);
      c.sendJson({ is_final: true });
      const done1 = await c.waitFor('done');
      expect(done1.reply_text).toBe('Goodbye, talk to you soon.');

      // Turn 2: no is_final; the utterance ends when 1.5 s pass without audio on the emulator clock.
      let from = c.messages.length;
      await sendFrames(c.ws, weather.pcm);
      await flush(c.ws);
      let a = await accountState(emu.platformUrl, key);
      expect(a.pending_timers.map((t: any) => t.label)).toEqual(['conversation utterance pause']);
      await ctl.advance(1499);
      a = await accountState(emu.platformUrl, key);
      expect(a.pending_timers).toHaveLength(1); // not yet
      expect(
        c
          .events()
          .slice(from)
          .some((e: any) => e.type === 'asr_final'),
      ).toBe(false);
      await ctl.advance(1);
      expect((await c.waitFor('asr_final', from)).asr_text).toBe('Any weather news?');
      const done2 = await c.waitFor('done', from);
      expect(done2.reply_text).toBe('Tomorrow will be sunny with a light breeze.');

      // Turn 3: 900 ms of trailing silence is not enough, 1000 ms ends the utterance (no clock move).
      // The synthesized sentence already ends with a pause of its own: count it.
      const ownTail = trailingSilentMs(other.pcm);
      expect(ownTail).toBeLessThan(800);
      from = c.messages.length;
      await sendFrames(c.ws, Buffer.concat([other.pcm, silencePcm(900 - ownTail)]));
      await flush(c.ws);
      a = await accountState(emu.platformUrl, key);
      expect(a.pending_timers).toHaveLength(1);
      expect(
        c
          .events()
          .slice(from)
          .some((e: any) => e.type === 'asr_final'),
      ).toBe(false);
      await sendFrames(c.ws, silencePcm(200), 6400);
      const final3 = await c.waitFor('asr_final', from);
      expect(final3.asr_text).toBe('Tell me a story.');
      const done3 = await c.waitFor('done', from);
      // No rule matches: a default reply in the text's language, the same for the same text.
      expect(['I see. Tell me more about that.', 'That is interesting. What would you like to do next?']).toContain(done3.reply_text);
      a = await accountState(emu.platformUrl, key);
      expect(a.pending_timers).toHaveLength(0);
      expect(a.resources.conversation.live_sessions).toMatchObject([{ session_id: sessionId, turns: 3, created_here: false }]);
      expect(a.resources.conversation_sessions).toMatchObject([{ session_id: sessionId, turns: 3 }]);

      // An is_final after an utterance that already ended by itself starts nothing.
      from = c.messages.length;
      c.sendJson({ is_final: true });
      await flush(c.ws);
      expect(c.messages.length).toBe(from);
    } finally {
      await ctl.freeze(false);
      c.ws.close();
      await c.closed;
    }
    const after = await accountState(emu.platformUrl, key);
    expect(after.open_websockets).toHaveLength(0);
    expect(after.resources.conversation.live_sessions).toHaveLength(0);
  });

  test('a pause only ends an utterance that had voice: silence alone is dropped', async () => {
    const key = 'conv-silence';
    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ voice_id: 'default' });
    await c.waitFor('session_created');
    await ctl.freeze(true);
    try {
      await sendFrames(c.ws, silencePcm(500));
      await flush(c.ws);
      await ctl.advance(1500);
      await flush(c.ws);
      expect(types(c.events())).toEqual(['session_created']);
      expect((await accountState(emu.platformUrl, key)).pending_timers).toHaveLength(0);
    } finally {
      await ctl.freeze(false);
      c.ws.close();
    }
  });

  test('is_final on silent audio: empty asr_final and a done without reply or charge', async () => {
    const key = 'conv-empty';
    await ctl.putAccount(key, { balance_micro: 5_000 });
    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ voice_id: 'default' });
    await c.waitFor('session_created');
    await sendFrames(c.ws, silencePcm(300));
    c.sendJson({ is_final: true });
    const done = await c.waitFor('done');
    expect(c.events().find((e) => e.type === 'asr_final').asr_text).toBe('');
    expect(done).toMatchObject({ reply_text: '', audio_duration_sec: 0 });
    expect(c.audio().length).toBe(0);
    expect((await ctl.account(key)).body.balance_micro).toBe(5_000);
    c.ws.close();
  });

  test('same seed and same requests give the same session ids and reply bytes', async () => {
    const run = async (e: RunningEmulator) => {
      const c = await connect(wsUrl(e.platformUrl, '/api/v1/audio/conversation/stream-text', 'conv-det'));
      c.sendJson({ voice_id: 'storyteller', text_input: '天气' });
      await c.waitFor('done');
      await c.closed;
      return { id: c.events()[0].session_id, audio: c.audio() };
    };
    const other = await startTestEmulator();
    try {
      const [a, b] = [await run(emu), await run(other)];
      expect(a.id).toBe(b.id);
      expect(a.audio.equals(b.audio)).toBe(true);
    } finally {
      await other.close();
    }
  });
});
