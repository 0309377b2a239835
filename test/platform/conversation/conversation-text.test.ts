import { describe, expect, test } from 'vitest';
import { emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { connect, decodeMp3, sendFrames, spokenPcm, wsUrl } from './conversation-helpers.js';
import { startsOnFrameSync } from '../../helpers/mp3.js';

const TEXT = '/api/v1/audio/conversation/stream-text';
const { emu, ctl } = emulatorForFile();

const kinds = (c: Awaited<ReturnType<typeof connect>>) => {
  const order = c.messages.map((m) => (m.kind === 'audio' ? 'binary' : m.event.type));
  return order.filter((t, i) => i === 0 || t !== order[i - 1]);
};

describe('stream-text, text mode: one turn, then the server closes', () => {
  test('first_token + llm_tokens = reply_text, MP3 frames, done, close 1000; a given session_id is replaced', async () => {
    const key = 'text-mode';
    await ctl.putAccount(key, { balance_micro: 1_000_000 });
    const c = await connect(wsUrl(emu.platformUrl, TEXT, key));
    c.sendJson({ session_id: 'ignored', voice_id: 'storyteller', audio_format: 'pcm16', text_input: '明天天气怎么样？' });
    const closed = await c.closed;
    expect(closed.code).toBe(1000);
    expect(kinds(c)).toEqual(['session_created', 'llm_first_token', 'llm_token', 'binary', 'done']);
    const events = c.events();
    expect(events[0].session_id).toMatch(/^conv_[0-9a-f]{24}$/);
    const done = events.at(-1);
    expect(done.reply_text).toBe('明天天气晴朗，微风。');
    const first = events.find((e) => e.type === 'llm_first_token').first_token;
    const tokens = events.filter((e) => e.type === 'llm_token').map((e) => e.token);
    expect(first).toBe('明');
    expect(tokens).toHaveLength([...done.reply_text].length - 1);
    expect(first + tokens.join('')).toBe(done.reply_text);

    const chunks = c.messages.filter((m) => m.kind === 'audio').map((m) => m.audio!);
    for (const chunk of chunks) expect(startsOnFrameSync(chunk)).toBe(true);
    const decoded = await decodeMp3(c.audio());
    expect(decoded.sampleRate).toBe(24000);
    expect(Math.abs(decoded.durationMs - done.audio_duration_sec * 1000)).toBeLessThanOrEqual(1);
    expect((await ctl.account(key)).body.balance_micro).toBe(1_000_000 - Math.round(1000 * done.audio_duration_sec));
  });

  test('binary frames sent in text mode are ignored', async () => {
    const c = await connect(wsUrl(emu.platformUrl, TEXT, 'text-mode-binary'));
    c.sendJson({ voice_id: 'english_tutor', text_input: 'bye' });
    c.ws.send(Buffer.alloc(3200), { binary: true });
    await c.closed;
    expect(c.events().at(-1)).toMatchObject({ type: 'done', reply_text: 'Goodbye, talk to you soon.' });
    expect(c.events().some((e) => e.type.startsWith('asr'))).toBe(false);
  });
});

describe('stream-text, voice mode (empty text_input)', () => {
  test('PCM frames and is_final → asr_partial…, asr_final, tokens, MP3, done, close', async () => {
    const spoken = 'Hello, is anyone there?';
    const { pcm } = await spokenPcm(emu.emulator, spoken, 'female_bright');
    const c = await connect(wsUrl(emu.platformUrl, TEXT, 'voice-mode'));
    c.sendJson({ meta: { session_id: '', voice_id: 'english_tutor', audio_format: 'pcm16', text_input: '' } });
    await c.waitFor('session_created');
    await sendFrames(c.ws, pcm);
    c.sendJson({ is_final: true });
    expect((await c.closed).code).toBe(1000);
    expect(kinds(c)).toEqual(['session_created', 'asr_partial', 'asr_final', 'llm_first_token', 'llm_token', 'binary', 'done']);
    const events = c.events();
    expect(events.filter((e) => e.type === 'asr_partial').length).toBeGreaterThanOrEqual(2);
    expect(events.find((e) => e.type === 'asr_final').asr_text).toBe(spoken);
    expect(events.at(-1).reply_text).toBe('Hello! How can I help you today?');
  });
});

describe('EMULATOR_LATENCY=realistic', () => {
  test('adds the documented delays: first character after ≥ 600 ms and within 3 s, audio after it', async () => {
    const slow = await startTestEmulator({ latency: 'realistic' });
    try {
      const c = await connect(wsUrl(slow.platformUrl, TEXT, 'latency'));
      c.sendJson({ voice_id: 'english_tutor', text_input: 'hi' });
      await c.closed;
      const done = c.events().at(-1);
      expect(done.type).toBe('done');
      expect(done.first_token_ms).toBeGreaterThanOrEqual(600);
      expect(done.first_token_ms).toBeLessThan(3000);
      // 20 ms per following token, then 350 ms before the first audio.
      expect(done.llm_ms).toBeGreaterThanOrEqual(600 + 20 * ([...done.reply_text].length - 1));
      expect(done.first_audio_ms).toBeGreaterThanOrEqual(done.first_token_ms + 350);
    } finally {
      await slow.close();
    }
  });
});
