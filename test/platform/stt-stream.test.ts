import { describe, expect, test } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import {
  accountState,
  connect,
  flush,
  refusedUpgrade,
  sendAll,
  sendFrames,
  silencePcm,
  spokenPcm,
  waitForState,
  wsUrl,
} from './conversation/conversation-helpers.js';

const PATH = '/v1/speech-to-text/stream';
const { emu, ctl } = emulatorForFile();

const FIELDS = ['type', 'text', 'asr_text', 'language', 'confidence', 'audio_duration_ms'];

async function exchange(key: string, messages: (unknown | Buffer)[]) {
  const c = await connect(wsUrl(emu.platformUrl, PATH, key));
  sendAll(c.ws, messages);
  return { closed: await c.closed, events: c.events() };
}

describe('recognition stream: auth before the upgrade', () => {
  test('no key: the upgrade is refused with HTTP 401 and the envelope', async () => {
    const r = await refusedUpgrade(wsUrl(emu.platformUrl, PATH));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error_code: 10003, error_message: expect.stringContaining('missing'), succeed: false, data: null });
  });

  test('a key without the recognition capability, and an HTTP fault status', async () => {
    await ctl.putAccount('stt-nocap', { capabilities: ['tts'] });
    const a = await refusedUpgrade(wsUrl(emu.platformUrl, PATH, 'stt-nocap'));
    expect(a.status).toBe(401);
    expect(a.body.error_code).toBe(10003);
    const b = await refusedUpgrade(wsUrl(emu.platformUrl, PATH, 'stt-ok'), { 'x-emulator-fault': 'status=429' });
    expect(b).toMatchObject({ status: 429, body: { error_code: 10014, succeed: false } });
  });

  test('close_ws and a fault code come before a fault status and the key (order of checks): they are answered on the socket', async () => {
    const c = await connect(wsUrl(emu.platformUrl, PATH), { 'x-emulator-fault': 'code=10014' });
    expect((await c.closed).code).toBe(1011);
    expect(c.events()).toEqual([expect.objectContaining({ type: 'error', code: 10014, message: 'injected fault: error 10014' })]);
    await ctl.putAccount('stt-nocap-fault', { capabilities: ['tts'] });
    const d = await connect(wsUrl(emu.platformUrl, PATH, 'stt-nocap-fault'), { 'x-emulator-fault': 'code=10000' });
    expect((await d.closed).code).toBe(1011);
    expect(d.events()[0]).toMatchObject({ type: 'error', code: 10000 });
    const e = await connect(wsUrl(emu.platformUrl, PATH), { 'x-emulator-fault': 'close_ws=4001;status=503' });
    expect((await e.closed).code).toBe(4001);
    expect(e.events()).toEqual([]);
    // Without the fault the same requests are refused before the upgrade.
    expect((await refusedUpgrade(wsUrl(emu.platformUrl, PATH))).status).toBe(401);
    expect((await refusedUpgrade(wsUrl(emu.platformUrl, PATH, 'stt-nocap-fault'))).status).toBe(401);
  });

  test('X-API-Key header works as well as ?api_key=; a plain GET gets HTTP 426', async () => {
    const c = await connect(wsUrl(emu.platformUrl, PATH), { 'x-api-key': 'stt-header' });
    c.sendJson({ meta: { audio_format: 'pcm16' } });
    c.sendJson({ is_final: true });
    expect((await c.closed).code).toBe(1008);
    expect(c.events()[0]).toMatchObject({ type: 'error', code: 20014 });
    const plain = await call(`${emu.platformUrl}${PATH}`, { headers: { 'x-api-key': 'k' } });
    expect(plain.status).toBe(426);
    expect(plain.body).toMatchObject({ error_code: 10001, succeed: false });
  });
});

describe('recognition stream: cut_after_chunks', () => {
  test('N result events leave, then the connection drops without a close frame; 0 drops it before the first', async () => {
    const key = 'stt-cut';
    await ctl.putAccount(key, { balance_micro: 1_000_000 });
    const { pcm } = await spokenPcm(emu.emulator, 'Please call me back after lunch today.');
    const c = await connect(wsUrl(emu.platformUrl, PATH, key), { 'x-emulator-fault': 'cut_after_chunks=2' });
    c.sendJson({ meta: { audio_format: 'pcm_16000', language: 'en' } });
    await sendFrames(c.ws, pcm, 3200);
    c.sendJson({ is_final: true });
    expect((await c.closed).code).toBe(1006);
    expect(c.events().map((e) => e.type)).toEqual(['asr_partial', 'asr_partial']);
    const j = await ctl.journal({ path: PATH, limit: 1 });
    expect(j.body.entries[0]).toMatchObject({ chunks: 2, note: 'connection cut after 2 chunks (fault)' });

    const none = await connect(wsUrl(emu.platformUrl, PATH, key), { 'x-emulator-fault': 'cut_after_chunks=0' });
    none.sendJson({ meta: { audio_format: 'pcm16' } });
    none.sendJson({ is_final: true });
    expect((await none.closed).code).toBe(1006);
    expect(none.events()).toEqual([]);
  });
});

describe('recognition stream: partials, final, done', () => {
  test("the emulator's own speech: growing asr_partial events while audio arrives, one asr_final, done, then close", async () => {
    const key = 'stt-speech';
    await ctl.putAccount(key, { balance_micro: 1_000_000 });
    const spoken = 'Please call me back after lunch today.';
    const { pcm } = await spokenPcm(emu.emulator, spoken);
    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ meta: { audio_format: 'pcm_16000', language: 'en' } });
    // Frames need not be sample-aligned: odd sizes are carried over.
    await sendFrames(c.ws, pcm, 3201);
    await flush(c.ws);
    const partialsBeforeFinal = c.events().length;
    c.sendJson({ is_final: true });
    expect((await c.closed).code).toBe(1000);
    const events = c.events();
    expect(events.map((e) => e.type).filter((t, i, a) => i === 0 || t !== a[i - 1])).toEqual(['asr_partial', 'asr_final', 'done']);
    const partials = events.filter((e) => e.type === 'asr_partial');
    expect(partials.length).toBe(partialsBeforeFinal);
    expect(partials.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < partials.length; i++) {
      expect(partials[i].text.length).toBeGreaterThan(partials[i - 1].text.length);
      expect(partials[i].audio_duration_ms).toBeGreaterThan(partials[i - 1].audio_duration_ms);
    }
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual([...FIELDS].sort());
      expect(e.asr_text).toBe(e.text);
      expect(e.language).toBe('en');
      expect(spoken.startsWith(e.text)).toBe(true);
    }
    const final = events.find((e) => e.type === 'asr_final');
    expect(final.text).toBe(spoken);
    expect(final.confidence).toBeGreaterThan(0.9);
    expect(final.audio_duration_ms).toBe(Math.round((pcm.length / 2 / 16000) * 1000));
    expect(events.at(-1)).toEqual({ ...final, type: 'done' });
    // Billed: recognition_audio_second (500 micro) × the audio's seconds.
    expect((await ctl.account(key)).body.balance_micro).toBe(1_000_000 - Math.round(500 * (pcm.length / 2 / 16000)));
  });

  test("flat meta; audio that is not the emulator's: the fixture transcript of the audio so far, revealed gradually", async () => {
    const tone = Buffer.alloc(3 * 16000 * 2);
    for (let i = 0; i < tone.length / 2; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000)), i * 2);
    const c = await connect(wsUrl(emu.platformUrl, PATH, 'stt-tone'));
    c.sendJson({ audio_format: 'pcm16' });
    await sendFrames(c.ws, tone);
    c.sendJson({ is_final: true });
    await c.closed;
    const events = c.events();
    const final = events.find((e) => e.type === 'asr_final');
    expect(final.text.length).toBeGreaterThan(0);
    // The fixture picks by duration, so the transcript may change as audio grows; partials never shrink.
    const partials = events.filter((e) => e.type === 'asr_partial');
    expect(partials.length).toBeGreaterThanOrEqual(1);
    expect(partials[0].audio_duration_ms).toBeLessThan(3000);
    for (let i = 1; i < partials.length; i++) expect(partials[i].text.length).toBeGreaterThan(partials[i - 1].text.length);
    expect(final.audio_duration_ms).toBe(3000);
  });
});

describe('recognition stream: error events with a numeric code, then close', () => {
  test.each([
    ['binary before meta', [Buffer.alloc(3200)], 10001, 'binary audio arrived before the meta message'],
    ['non-JSON text', ['nope'], 10001, 'text message is not valid JSON'],
    ['bad audio_format', [{ meta: { audio_format: 'mp3' } }], 10001, 'meta.audio_format: must be "pcm16" or "pcm_16000"'],
    ['bad language', [{ meta: { language: 'English please' } }], 10001, 'meta.language: must be a language code'],
    ['wrapped meta with sibling keys', [{ type: 'meta', ts: 1, meta: { audio_format: 'mp3' } }], 10001, 'meta.audio_format: must be "pcm16" or "pcm_16000"'],
    ['is_final first', [{ is_final: true }], 10001, 'meta: the first message must be'],
    ['under 2 s of audio', [{ meta: {} }, silencePcm(1990), { is_final: true }], 20014, 'audio is shorter than 2 seconds'],
  ])('%s', async (_name, messages, code, message) => {
    const r = await exchange('stt-errors', messages as unknown[]);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: 'error', code, text: '', asr_text: '' });
    expect(r.events[0].message.startsWith(message)).toBe(true);
    expect(r.closed.code).toBe(1008);
  });

  test('2 s of silence is long enough: an empty text', async () => {
    const r = await exchange('stt-errors', [{ meta: { language: 'zh' } }, silencePcm(2000), { is_final: true }]);
    expect(r.events.map((e) => e.type)).toEqual(['asr_final', 'done']);
    expect(r.events[0]).toMatchObject({ text: '', language: 'zh', audio_duration_ms: 2000 });
  });

  test('balance too low → 20003; fault code → that code; close_ws', async () => {
    await ctl.putAccount('stt-poor', { balance_micro: 100 });
    const poor = await exchange('stt-poor', [{ meta: {} }, silencePcm(2000), { is_final: true }]);
    expect(poor.events[0]).toMatchObject({ type: 'error', code: 20003 });
    const c = await connect(wsUrl(emu.platformUrl, PATH, 'stt-fault'), { 'x-emulator-fault': 'code=10000' });
    expect((await c.closed).code).toBe(1011);
    expect(c.events()[0]).toMatchObject({ type: 'error', code: 10000 });
    const d = await connect(wsUrl(emu.platformUrl, PATH, 'stt-fault'), { 'x-emulator-fault': 'close_ws=4003' });
    expect((await d.closed).code).toBe(4003);
  });

  test('an abrupt disconnect mid-stream leaves nothing behind', async () => {
    const key = 'stt-drop';
    const c = await connect(wsUrl(emu.platformUrl, PATH, key));
    c.sendJson({ meta: {} });
    await sendFrames(c.ws, silencePcm(500));
    await flush(c.ws);
    expect((await accountState(emu.platformUrl, key)).open_websockets).toHaveLength(1);
    c.ws.terminate();
    const a = await waitForState(emu.platformUrl, key, (s) => s.open_websockets.length === 0);
    expect(a.pending_timers).toHaveLength(0);
  });
});
