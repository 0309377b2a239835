import { describe, expect, test } from 'vitest';
import { call, control, emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { accountState, connect, flush, sendAll, sendFrames, silencePcm, spokenPcm, waitForState, wsUrl } from './conversation-helpers.js';

const STREAM = '/api/v1/audio/conversation/stream';
const TEXT = '/api/v1/audio/conversation/stream-text';
const { emu, ctl } = emulatorForFile();

/** Connects, sends the given messages, and returns every event and the close code. */
async function exchange(path: string, key: string | undefined, messages: (unknown | Buffer)[], headers: Record<string, string> = {}) {
  const c = await connect(wsUrl(emu.platformUrl, path, key), headers);
  sendAll(c.ws, messages);
  const closed = await c.closed;
  return { events: c.events(), audio: c.audio(), closed, messages: c.messages };
}

describe('auth on the conversation sockets: error "20001", then the server closes', () => {
  test.each([STREAM, TEXT])('%s without api_key', async (path) => {
    const r = await exchange(path, undefined, []);
    expect(r.events).toEqual([{ type: 'error', code: '20001', message: 'api_key query parameter is missing' }]);
    expect(r.closed.code).toBe(1008);
  });

  test('a disabled key and a key without the calls capability', async () => {
    await ctl.putAccount('conv-disabled', { disabled: true });
    await ctl.putAccount('conv-nocalls', { capabilities: ['tts'] });
    const a = await exchange(STREAM, 'conv-disabled', []);
    expect(a.events[0]).toMatchObject({ type: 'error', code: '20001', message: expect.stringContaining('disabled') });
    const b = await exchange(TEXT, 'conv-nocalls', []);
    expect(b.events[0]).toMatchObject({ type: 'error', code: '20001', message: 'this API key lacks the calls capability' });
  });

  test('an unknown key under strict keys', async () => {
    const strict = await startTestEmulator({ strictKeys: true });
    try {
      const c = await connect(wsUrl(strict.platformUrl, STREAM, 'not-listed'));
      expect((await c.closed).code).toBe(1008);
      expect(c.events()).toEqual([{ type: 'error', code: '20001', message: 'api_key is not a valid API key' }]);
    } finally {
      await strict.close();
    }
  });
});

describe('parameter errors: "20003" naming the field and the rule', () => {
  const cases: [string, string, unknown[], string][] = [
    ['binary before meta', STREAM, [Buffer.alloc(3200)], 'binary audio arrived before the meta message'],
    ['non-JSON text', STREAM, ['hello there'], 'text message is not valid JSON'],
    ['a JSON array', TEXT, ['[1,2]'], 'text message must be a JSON object'],
    ['is_final before meta', STREAM, [{ is_final: true }], 'meta: the first message must be meta'],
    ['missing voice_id', STREAM, [{ language: 'en' }], 'voice_id: is required'],
    ['unknown role', TEXT, [{ voice_id: 'nobody', text_input: 'hi' }], 'voice_id: unknown role "nobody"'],
    ['wrong audio format (flat)', STREAM, [{ voice_id: 'default', audio_format: 'mp3' }], 'audio_format: must be "pcm16"'],
    ['wrong audio format (wrapped)', STREAM, [{ meta: { voice_id: 'default', audio_format: 'opus' } }], 'meta.audio_format: must be "pcm16"'],
    ['bad language', STREAM, [{ voice_id: 'default', language: 'fr' }], 'language: must be "zh" or "en"'],
    // A wrapper with other keys beside `meta` (type, a timestamp) is still unwrapped: the error names meta.*.
    [
      'wrapped meta with sibling keys',
      TEXT,
      [{ type: 'meta', seq: 1, meta: { voice_id: 'default', audio_format: 'opus' } }],
      'meta.audio_format: must be "pcm16"',
    ],
    ['unknown session_id', STREAM, [{ meta: { voice_id: 'default', session_id: 'sess_nope' } }], 'meta.session_id: no session "sess_nope" for this API key'],
    ['text_input too long', TEXT, [{ voice_id: 'default', text_input: 'a'.repeat(2001) }], 'text_input: must be at most 2000 characters'],
    ['non-string text_input', TEXT, [{ voice_id: 'default', text_input: 42 }], 'text_input: must be a string'],
  ];
  test.each(cases)('%s', async (_name, path, messages, message) => {
    const r = await exchange(path, 'conv-params', messages);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: 'error', code: '20003' });
    expect(r.events[0].message.startsWith(message)).toBe(true);
    expect(r.closed.code).toBe(1008);
  });

  test('stream-text voice mode: is_final without audio', async () => {
    const r = await exchange(TEXT, 'conv-params', [{ voice_id: 'default', text_input: '' }, { is_final: true }]);
    expect(r.events.map((e) => e.type)).toEqual(['session_created', 'error']);
    expect(r.events[1]).toMatchObject({ code: '20003', message: 'is_final: no audio was received before it' });
  });

  test('a plain GET without Upgrade gets the envelope with HTTP 426', async () => {
    const r = await call(`${emu.platformUrl}${STREAM}?api_key=k`);
    expect(r.status).toBe(426);
    expect(r.body).toMatchObject({ error_code: 20003, succeed: false, data: null });
  });
});

describe('balance: "40011"', () => {
  test('an empty balance cannot start a conversation', async () => {
    await ctl.putAccount('conv-broke', { balance_micro: 0 });
    const r = await exchange(STREAM, 'conv-broke', [{ voice_id: 'default' }]);
    expect(r.events).toEqual([{ type: 'error', code: '40011', message: 'insufficient balance: the conversation cannot start' }]);
  });

  test('a balance below the price of the reply audio: no token, no audio, no charge', async () => {
    await ctl.putAccount('conv-poor', { balance_micro: 1000 }); // one second of reply audio
    const r = await exchange(TEXT, 'conv-poor', [{ voice_id: 'english_tutor', text_input: 'hello' }]);
    expect(r.events.map((e) => e.type)).toEqual(['session_created', 'error']);
    expect(r.events[1]).toMatchObject({ code: '40011' });
    expect(r.audio.length).toBe(0);
    expect((await ctl.account('conv-poor')).body.balance_micro).toBe(1000);
  });
});

describe('faults', () => {
  test.each([
    ['code=50000', 'INTERNAL'],
    ['code=10006', 'DEADLINE_EXCEEDED'],
    ['code=40012', '40012'],
    ['code=14', 'UNAVAILABLE'],
    ['status=504', 'DEADLINE_EXCEEDED'],
    ['status=429', 'RESOURCE_EXHAUSTED'],
    ['status=401', '20001'],
  ])('X-Emulator-Fault %s → error code %s, close 1011', async (fault, code) => {
    const r = await exchange(STREAM, 'conv-faults', [], { 'x-emulator-fault': fault });
    expect(r.events).toEqual([{ type: 'error', code, message: expect.stringContaining('injected fault') }]);
    expect(r.closed.code).toBe(1011);
  });

  test('a queued rule of the control plane, and close_ws', async () => {
    await ctl.addFault({ path: TEXT, times: 1, fault: { code: 4 } });
    const a = await exchange(TEXT, 'conv-faults', []);
    expect(a.events[0]).toMatchObject({ type: 'error', code: 'DEADLINE_EXCEEDED' });
    const b = await exchange(STREAM, 'conv-faults', [], { 'x-emulator-fault': 'close_ws=4001' });
    expect(b.events).toEqual([]);
    expect(b.closed.code).toBe(4001);
  });

  test('cut_after_chunks=2: two MP3 frames, then the connection drops; nothing is left behind', async () => {
    const key = 'conv-cut';
    const c = await connect(wsUrl(emu.platformUrl, TEXT, key), { 'x-emulator-fault': 'cut_after_chunks=2' });
    c.sendJson({ voice_id: 'default', text_input: 'hello' });
    const closed = await c.closed;
    expect(closed.code).toBe(1006);
    expect(c.messages.filter((m) => m.kind === 'audio')).toHaveLength(2);
    expect(c.events().some((e) => e.type === 'done')).toBe(false);
    const j = await ctl.journal({ path: TEXT, limit: 1 });
    expect(j.body.entries[0]).toMatchObject({ chunks: 2, note: 'connection cut after 2 chunks (fault)' });
    const a = await waitForState(emu.platformUrl, key, (s) => s.open_websockets.length === 0);
    expect(a.pending_timers).toHaveLength(0);
    expect(a.resources.conversation.live_sessions).toHaveLength(0);
  });
});

describe('abrupt disconnects leave no session, timer or listener behind', () => {
  test('in the middle of an utterance (pause timer pending)', async () => {
    const key = 'conv-drop-audio';
    const c = await connect(wsUrl(emu.platformUrl, STREAM, key));
    c.sendJson({ voice_id: 'default' });
    await c.waitFor('session_created');
    await ctl.freeze(true);
    try {
      await sendFrames(c.ws, (await spokenPcm(emu.emulator, 'Some words.')).pcm.subarray(0, 16000));
      await flush(c.ws);
      const before = await accountState(emu.platformUrl, key);
      expect(before.open_websockets).toHaveLength(1);
      expect(before.pending_timers).toHaveLength(1);
      expect(before.resources.conversation.live_sessions).toHaveLength(1);
      c.ws.terminate();
      const after = await waitForState(emu.platformUrl, key, (s) => s.open_websockets.length === 0);
      expect(after.pending_timers).toHaveLength(0);
      expect(after.resources.conversation.live_sessions).toHaveLength(0);
    } finally {
      await ctl.freeze(false);
    }
  });

  test('in the middle of a reply; the server keeps serving', async () => {
    const key = 'conv-drop-reply';
    const c = await connect(wsUrl(emu.platformUrl, STREAM, key));
    c.sendJson({ voice_id: 'support_agent' });
    await c.waitFor('session_created');
    await sendFrames(c.ws, (await spokenPcm(emu.emulator, 'Hi there.')).pcm);
    c.sendJson({ is_final: true });
    await c.waitFor('llm_first_token');
    c.ws.terminate();
    const after = await waitForState(emu.platformUrl, key, (s) => s.open_websockets.length === 0);
    expect(after.pending_timers).toHaveLength(0);
    expect(after.resources.conversation.live_sessions).toHaveLength(0);
    const again = await exchange(TEXT, key, [{ voice_id: 'support_agent', text_input: 'bye' }]);
    expect(again.events.at(-1)).toMatchObject({ type: 'done', reply_text: 'Goodbye, talk to you soon.' });
    expect(again.closed.code).toBe(1000);
  });

  test('a reset of the account closes its sockets (1012)', async () => {
    const key = 'conv-reset';
    const c = await connect(wsUrl(emu.platformUrl, STREAM, key));
    c.sendJson({ voice_id: 'default' });
    await c.waitFor('session_created');
    await sendFrames(c.ws, silencePcm(200));
    await flush(c.ws);
    await ctl.reset(key);
    expect((await c.closed).code).toBe(1012);
    const a = await accountState(emu.platformUrl, key);
    expect(a?.open_websockets ?? []).toHaveLength(0);
  });
});
