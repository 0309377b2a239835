import { describe, expect, it } from 'vitest';
import { BARGE_IN_VOICE_MS, SILENCE_END_MS, startRoomBot } from '../../../src/services/platform/room/bot/index.js';
import { call, emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { ffprobe } from '../../helpers/ffprobe.js';
import { callWithEntry, FRAME, feed, hear, micOf, recorder, silence, sleep, startBot } from './bot-helpers.js';

/** The call room's bot, driven without WebRTC: what it says, hears, shows and keeps, against a real emulator. */
const { emu, ctl } = emulatorForFile();
const ROLE_EN = { timbre: 'support_agent', language: 'en' };
const TUTOR_GREETING = "Hi! I'm your English tutor. What would you like to talk about today?";

describe('room bot: greeting', () => {
  it('speaks the role greeting as 20 ms frames of 48 kHz PCM paced in real time; hear finds its text; the journal keeps it', async () => {
    const key = 'room-bot-greet';
    const { sessionId, entry } = await callWithEntry(emu, key, { timbre: 'english_tutor', language: 'en' });
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, sessionId, role: 'english_tutor', language: 'en', entry }, rec);
    const t0 = performance.now();
    bot.greet();
    await rec.until(() => rec.finals('bot').length === 1 && rec.stateNames().at(-1) === 'listening', 'the greeting');
    bot.close();

    // Every frame is one 20 ms frame; together they last as long as the synthesis (padded to a whole frame).
    expect(rec.frames.length).toBeGreaterThan(100);
    for (const f of rec.frames) expect(f.frame.length).toBe(FRAME);
    const audioMs = rec.frames.length * 20;
    const first = rec.frames[0]!.at;
    const last = rec.frames.at(-1)!.at;
    // Paced in real time: the first frame at once, the last one the audio's length later (not a burst).
    expect(first - t0).toBeLessThan(1500);
    expect(last - first).toBeGreaterThan(audioMs * 0.9 - 20);
    expect(last - first).toBeLessThan(audioMs * 1.3);

    // What a client recorded from the track: the emulator's own speech, the greeting whole.
    const heard = await hear(emu, rec.audio());
    expect(heard.utterances).toHaveLength(1);
    expect(heard.utterances[0]!.full_text).toBe(TUTOR_GREETING);
    expect(heard.utterances[0]!.complete).toBe(true);

    expect(rec.stateNames()).toEqual(['listening', 'speaking', 'listening']);
    const bot_ = rec.transcripts.filter((t) => t.speaker === 'bot');
    expect(bot_.at(-1)).toMatchObject({ text: TUTOR_GREETING, final: true });
    // Interim transcriptions grow toward the text, on one segment id.
    expect(bot_.length).toBeGreaterThan(1);
    expect(new Set(bot_.map((t) => t.segmentId)).size).toBe(1);
    for (const t of bot_) expect(TUTOR_GREETING.startsWith(t.text)).toBe(true);

    // The journal: the bot's audio as answer_audio (a WAV of what it sent), its turn as a frame.
    const seen = (await ctl.call('GET', `/journal/${entry.id}`)).body;
    expect(seen.answer_audio).toMatchObject({ format: 'pcm', sample_rate: 48000, channels: 1, bytes: rec.frames.length * FRAME * 2 });
    const wav = await call(`${emu.platformUrl}/_emulator/journal/${entry.id}/answer-audio`);
    const probe = await ffprobe(wav.bytes, { ext: 'wav' });
    expect(probe).toMatchObject({ sampleRate: 48000, channels: 1, codec: 'pcm_s16le' });
    expect(probe.durationMs).toBeCloseTo(audioMs, -1);
    const turn = seen.ws_frames.find((f: any) => f.event === 'bot_turn');
    expect(turn.content).toEqual({ kind: 'greeting', reply: TUTOR_GREETING, spoken_ms: audioMs });
  });

  it('an agent speaks its fixture greeting; one without a greeting says the default rule with its name', async () => {
    for (const [agentId, text] of [
      ['agent_demo', 'Hello! I am the demo agent. How can I help you today?'],
      ['agent_foreign', 'Hello, this is Agent of another project. How can I help you?'],
    ] as const) {
      const rec = recorder();
      const bot = startBot(emu, { kind: 'agent', accountKey: 'room-bot-agent', agentId }, rec);
      bot.greet();
      await rec.until(() => rec.finals('bot').length === 1, 'the greeting');
      bot.close();
      expect(rec.finals('bot')[0]!.text).toBe(text);
      expect((await hear(emu, rec.audio())).utterances[0]!.full_text).toBe(text);
    }
  });
});

describe('room bot: a turn', () => {
  it('an utterance then silence: listening → thinking → speaking → listening, the exact user text, the scripted reply heard, charged as the socket', async () => {
    const key = 'room-bot-turn';
    const { sessionId, entry } = await callWithEntry(emu, key, { timbre: 'support_agent', language: 'en' });
    const turns: { user: string; reply: string }[] = [];
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, sessionId, role: 'support_agent', language: 'en', entry, onTurn: (t) => turns.push(t) }, rec);
    const before = (await ctl.account(key)).body.balance_micro as number;

    const said = 'Hello there, can you hear me?';
    const mic = await micOf(emu, said);
    // Silence, the utterance, then silence longer than the end-of-utterance rule.
    await feed(bot, silence(2000));
    expect(rec.stateNames()).toEqual(['listening']);
    await feed(bot, mic);
    await feed(bot, silence(SILENCE_END_MS + 100));
    await rec.until(() => rec.finals('bot').length === 1, 'the reply');
    await rec.until(() => rec.stateNames().at(-1) === 'listening', 'listening again');
    bot.close();

    expect(rec.stateNames()).toEqual(['listening', 'thinking', 'speaking', 'listening']);
    const user = rec.transcripts.filter((t) => t.speaker === 'user');
    expect(user.at(-1)).toMatchObject({ text: said, final: true });
    // Interim user transcriptions came while the user spoke, on the final's segment.
    expect(user.length).toBeGreaterThan(1);
    expect(new Set(user.map((t) => t.segmentId)).size).toBe(1);
    const reply = 'Hello! How can I help you today?';
    expect(rec.finals('bot')[0]!.text).toBe(reply);
    expect(turns).toEqual([{ user: said, reply }]);
    // The state moved to speaking with the reply's first frame.
    const speaking = rec.states.find((s) => s.state === 'speaking')!;
    expect(Math.abs(speaking.at - rec.frames[0]!.at)).toBeLessThan(50);

    const heard = await hear(emu, rec.audio());
    expect(heard.utterances.map((u) => [u.full_text, u.complete])).toEqual([[reply, true]]);

    // The reply's audio is charged as the conversation socket charges it: per second of reply audio.
    const price = 1000; // billing.json conversation_audio_second
    const after = (await ctl.account(key)).body.balance_micro as number;
    expect(before - after).toBe(Math.round((price * rec.frames.length * 20) / 1000));

    // The journal: the microphone as client_audio (48 kHz), the bot's reply as answer_audio, the turn.
    const seen = (await ctl.call('GET', `/journal/${entry.id}`)).body;
    expect(seen.client_audio).toMatchObject({ sample_rate: 48000, bytes: (2000 * 48 + mic.length + (SILENCE_END_MS + 100) * 48) * 2 });
    const wav = await call(`${emu.platformUrl}/_emulator/journal/${entry.id}/audio.wav`);
    const fromMic = await hear(emu, wav.bytes, 'audio/wav');
    expect(fromMic.utterances[0]!.full_text).toBe(said);
    const turn = seen.ws_frames.find((f: any) => f.event === 'bot_turn');
    expect(turn.content).toEqual({ kind: 'reply', user: said, reply, spoken_ms: rec.frames.length * 20 });
  });

  it('silence alone, however long, is no utterance: no state change, nothing said', async () => {
    const rec = recorder();
    const bot = startBot(emu, { accountKey: 'room-bot-quiet' }, rec);
    await feed(bot, silence(5000));
    await sleep(100);
    bot.close();
    expect(rec.stateNames()).toEqual(['listening']);
    expect(rec.frames).toHaveLength(0);
    expect(rec.transcripts).toHaveLength(0);
  });
});

describe('room bot: balance and ids', () => {
  it('a reply the balance cannot pay is not said (the socket refuses it the same way); the turn is journaled unpaid', async () => {
    const key = 'room-bot-poor';
    const { sessionId, entry } = await callWithEntry(emu, key, ROLE_EN);
    // Enough for nothing: a reply of about 2 s costs 2,000 micro-units.
    expect((await ctl.putAccount(key, { balance_micro: 500 })).status).toBe(200);
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, sessionId, role: 'support_agent', language: 'en', entry }, rec);
    await feed(bot, await micOf(emu, 'Hello there.'));
    await feed(bot, silence(SILENCE_END_MS + 100));
    await rec.until(() => rec.stateNames().length === 3, 'the turn');
    await sleep(200);
    bot.close();
    expect(rec.stateNames()).toEqual(['listening', 'thinking', 'listening']);
    expect(rec.frames).toHaveLength(0);
    expect(rec.finals('user').map((t) => t.text)).toEqual(['Hello there.']);
    expect((await ctl.account(key)).body.balance_micro).toBe(500);
    const seen = (await ctl.call('GET', `/journal/${entry.id}`)).body;
    expect(seen.ws_frames.find((f: any) => f.event === 'bot_turn').content).toEqual({
      kind: 'reply',
      user: 'Hello there.',
      reply: 'Hello! How can I help you today?',
      spoken_ms: 0,
      unpaid: true,
    });
  });

  it("transcription segment ids come from the account's seeded id stream: the same seed and input give the same ids", async () => {
    const ids: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const other = await startTestEmulator();
      try {
        const rec = recorder();
        const bot = startRoomBot(
          other.emulator,
          { kind: 'call', sessionId: 's', accountKey: 'room-bot-ids', role: 'support_agent', fault: { rtf: 20 } },
          rec.out,
        );
        bot.greet();
        await rec.until(() => rec.finals('bot').length === 1, 'the greeting');
        bot.close();
        ids.push([...new Set(rec.transcripts.map((t) => t.segmentId))]);
      } finally {
        await other.close();
      }
    }
    expect(ids[0]).toHaveLength(1);
    expect(ids[0]![0]).toMatch(/^SG_[0-9a-f]{12}$/);
    expect(ids[1]).toEqual(ids[0]);
  });
});

describe('room bot: barge-in', () => {
  it(`user speech while the bot speaks stops its audio once ${BARGE_IN_VOICE_MS} ms of voice arrived; the cut is journaled`, async () => {
    const key = 'room-bot-barge';
    const { sessionId, entry } = await callWithEntry(emu, key, { timbre: 'english_tutor', language: 'en' });
    const rec = recorder();
    const bot = startBot(emu, { accountKey: key, sessionId, role: 'english_tutor', language: 'en', entry }, rec);
    const mic = await micOf(emu, 'Wait, I have a question about the weather.');
    bot.greet();
    await rec.until(() => rec.frames.length >= 40, '800 ms of greeting');
    // The user talks over the bot, in real time. `sent[k]`: the bot's frames sent before mic frame k arrived.
    const sent: number[] = [];
    await feed(bot, mic, { realTime: true, onFrame: (_at, k) => (sent[k] = rec.frames.length) });
    const cut = rec.frames.length;
    await sleep(200);
    expect(rec.frames.length).toBe(cut); // nothing after the cut
    // The first voiced frame of the microphone, and the frame by which BARGE_IN_VOICE_MS of voice had surely
    // arrived (the detector's 20 ms windows need not line up with the frames: one frame more).
    const onset = [...Array(sent.length).keys()].find((k) => mic.subarray(k * FRAME, (k + 1) * FRAME).some((v) => Math.abs(v) > 1000))!;
    const heard = onset + Math.ceil(BARGE_IN_VOICE_MS / 20) + 2;
    // Once that much voice arrived, not one more frame of the bot left.
    expect(cut).toBe(sent[heard]);
    // It spoke on until then: the cut came from the voice, after the greeting had started.
    expect(cut).toBeGreaterThanOrEqual(sent[onset]!);
    await feed(bot, silence(SILENCE_END_MS + 100));
    await rec.until(() => rec.finals('bot').length === 2 && rec.stateNames().at(-1) === 'listening', 'the reply to the interruption');
    bot.close();

    // The greeting's transcription ends at what was said; the interruption is answered (weather rule).
    const [greeting, reply] = rec.finals('bot');
    expect(greeting!.text.length).toBeLessThan(TUTOR_GREETING.length);
    expect(TUTOR_GREETING.startsWith(greeting!.text)).toBe(true);
    expect(reply!.text).toBe('Tomorrow will be sunny with a light breeze.');
    expect(rec.stateNames()).toEqual(['listening', 'speaking', 'listening', 'thinking', 'speaking', 'listening']);
    const seen = (await ctl.call('GET', `/journal/${entry.id}`)).body;
    const greetingTurn = seen.ws_frames.find((f: any) => f.event === 'bot_turn').content;
    expect(greetingTurn).toMatchObject({ kind: 'greeting', cut: true, spoken_ms: cut * 20 });
    expect(seen.note).toMatch(/last audio \d+ ms after the client left or cancelled/);
  });
});
