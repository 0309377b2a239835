import { describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from '../beyond.js';
import { strictEvents, t2a } from '../helpers.js';
import { piecesOf, session, START } from './ws-helpers.js';

/**
 * Rule E10 on HTTP and `/ws/v1/t2a_v2`: `text_normalization_mode`, events of the bidirectional socket,
 * `session_id` in `task_start`, `usage_voice_count` on a cloned or designed voice's first synthesis.
 */
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });

const NUMBERS = 'It is -5 degrees, and -12 at night.';
const PCM = { format: 'pcm', sample_rate: 8000 };
const body = (extra: Record<string, unknown> = {}, voiceSetting: Record<string, unknown> = {}, model = 'speech-2.8-hd') => ({
  model,
  text: NUMBERS,
  voice_setting: { voice_id: 'male-qn-qingse', ...voiceSetting },
  audio_setting: PCM,
  ...extra,
});
const audioOf = async (b: Record<string, unknown>, key: string) => {
  const r = await t2a(emu.speechUrl, b, { key });
  expect(codeOf(r)).toBe(0);
  return r.body.data.audio as string;
};
const finish = { event: 'task_finish' };
const say = (text: string) => ({ event: 'task_continue', text });

describe('text_normalization_mode', () => {
  it('a value outside basic, quality is 2013 naming the field, on HTTP and on the socket', async () => {
    const msg = 'invalid params, text_normalization_mode must be one of basic, quality';
    for (const bad of ['fast', 'Basic', 1, true]) {
      const r = await t2a(emu.speechUrl, body({ text_normalization_mode: bad }));
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, msg]);
    }
    const ws = await session(emu.speechUrl, [{ ...START, text_normalization_mode: 'fast' }, say('Hi.'), finish]);
    expect(ws.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expect([ws.messages[1].base_resp.status_code, ws.messages[1].base_resp.status_msg]).toEqual([2013, msg]);
  });

  it('basic and quality normalise the same way; the deprecated booleans set to true mean basic; the mode wins over false', async () => {
    const key = 'e10-normalise';
    const none = await audioOf(body(), key);
    const basic = await audioOf(body({ text_normalization_mode: 'basic' }), key);
    expect(basic).not.toBe(none); // "-5" is read with its sign
    expect(await audioOf(body({ text_normalization_mode: 'quality' }), key)).toBe(basic);
    expect(await audioOf(body({}, { text_normalization: true }), key)).toBe(basic);
    expect(await audioOf(body({}, { english_normalization: true }), key)).toBe(basic);
    expect(await audioOf(body({ text_normalization_mode: 'basic' }, { text_normalization: false }), key)).toBe(basic);
    expect(await audioOf(body({ text_normalization_mode: null }, { text_normalization: false }), key)).toBe(none);
  });

  it('the mode each request got is recorded: quality only for non-streaming HTTP on 2.8/2.6, basic elsewhere', async () => {
    const key = 'e10-recorded';
    await audioOf(body({ text_normalization_mode: 'quality' }), key); // quality
    await audioOf(body({ text_normalization_mode: 'quality' }, {}, 'speech-2.6-turbo'), key); // quality
    await audioOf(body({ text_normalization_mode: 'quality' }, {}, 'speech-02-hd'), key); // basic
    await audioOf(body({}, { text_normalization: true }), key); // basic
    await audioOf(body(), key); // none
    const streamed = await t2a(emu.speechUrl, body({ stream: true, text_normalization_mode: 'quality' }), { key }); // basic
    expect(strictEvents(streamed.text).at(-1).data.status).toBe(2);
    const ws = await session(emu.speechUrl, [{ ...START, text_normalization_mode: 'quality', audio_setting: PCM }, say(NUMBERS), finish], { key }); // basic
    expect(ws.messages.at(-1).event).toBe('task_finished');
    const usage = (await control(emu.speechUrl).accountState(key)).resources.speech;
    expect([usage.requests, usage.text_normalization_modes]).toEqual([7, { quality: 2, basic: 4 }]);
  });

  it('on the socket, quality is basic: the same audio as text_normalization true', async () => {
    const run = async (fields: Record<string, unknown>) =>
      piecesOf((await session(emu.speechUrl, [{ ...START, ...fields, audio_setting: PCM }, say(NUMBERS), finish])).messages)[0]!.audio;
    const plain = await run({});
    const quality = await run({ text_normalization_mode: 'quality' });
    expect(quality.equals(plain)).toBe(false);
    expect(quality.equals(await run({ text_normalization_mode: 'basic' }))).toBe(true);
    expect(quality.equals(await run({ voice_setting: { voice_id: 'male-qn-qingse', english_normalization: true } }))).toBe(true);
  });
});

describe('/ws/v1/t2a_v2 is not the bidirectional socket', () => {
  it.each(['task_flush', 'task_cancel'])('%s is task_failed 2202 (before and after task_start), then close 1000', async (name) => {
    const msg = `illegal event: unknown event "${name}" on this socket: it is an event of /ws/v1/t2a_v2_bidi; expected task_start, task_continue or task_finish`;
    const after = await session(emu.speechUrl, [START, say('Hello there.'), { event: name }]);
    const failed = after.messages.at(-1);
    expect([failed.event, failed.base_resp.status_code, failed.base_resp.status_msg]).toEqual(['task_failed', 2202, msg]);
    expect(after.close.code).toBe(1000);
    const before = await session(emu.speechUrl, [{ event: name }, START]);
    expect(before.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expect(before.messages[1].base_resp.status_code).toBe(2202);
  });

  it('session_id in task_start is ignored: the server keeps its own, whatever the type', async () => {
    for (const sessionId of ['my-own-session', 42, null]) {
      const r = await session(emu.speechUrl, [{ ...START, session_id: sessionId, audio_setting: PCM }, say('Hi.'), finish]);
      const own = r.messages[0].session_id;
      expect(own).not.toBe(sessionId);
      expect(r.messages.map((m) => m.event)).toEqual([
        'connected_success',
        'task_started',
        ...r.messages.slice(2, -1).map(() => 'task_continued'),
        'task_finished',
      ]);
      for (const m of r.messages) expect(m.session_id).toBe(own);
    }
  });
});

describe('usage_voice_count', () => {
  const design = async (api: ReturnType<typeof speechApi>) => {
    const d = await api.post('/v1/voice_design', { prompt: 'A bright young voice', preview_text: 'Hi.' });
    expect(codeOf(d)).toBe(0);
    return d.body.voice_id as string;
  };

  it('HTTP: present (1) on the first synthesis with a designed voice, absent after and with system voices', async () => {
    const api = speechApi(emu.speechUrl, 'e10-fee-http');
    const voice = await design(api);
    const first = await api.speak(voice);
    expect(first.body.extra_info.usage_voice_count).toBe(1);
    const again = await api.speak(voice);
    expect('usage_voice_count' in again.body.extra_info).toBe(false);
    expect('usage_voice_count' in (await api.speak('female-shaonv')).body.extra_info).toBe(false);
  });

  it('HTTP: counts the new voices of a mix (cloned and designed); a streamed answer carries it in the final extra_info', async () => {
    const api = speechApi(emu.speechUrl, 'e10-fee-mix');
    const a = await design(api);
    const b = await design(api);
    expect(codeOf(await api.clone('E10CloneVoice1'))).toBe(0);
    const mix = (ids: string[], extra: Record<string, unknown> = {}) =>
      api.post('/v1/t2a_v2', { model: 'speech-02-hd', text: 'Mixed voices.', timber_weights: ids.map((voice_id) => ({ voice_id, weight: 1 })), ...extra });
    expect((await mix([a, b, 'female-shaonv'])).body.extra_info.usage_voice_count).toBe(2);
    const streamed = await mix([a, 'E10CloneVoice1'], { stream: true });
    const events = strictEvents(streamed.text);
    expect(events.at(-1).extra_info.usage_voice_count).toBe(1);
    expect(events.slice(0, -1).every((e) => e.extra_info === undefined)).toBe(true);
    expect('usage_voice_count' in (await mix([a, b, 'E10CloneVoice1'])).body.extra_info).toBe(false);
  });

  it("WebSocket: the piece that is a voice's first synthesis carries it; later pieces do not", async () => {
    const api = speechApi(emu.speechUrl, 'e10-fee-ws');
    const voice = await design(api);
    const r = await session(
      emu.speechUrl,
      [{ ...START, voice_setting: { voice_id: voice }, audio_setting: PCM }, say('First piece.'), say('Second piece.'), finish],
      { key: 'e10-fee-ws' },
    );
    const pieces = piecesOf(r.messages);
    expect(pieces).toHaveLength(2);
    expect(pieces[0]!.extra.usage_voice_count).toBe(1);
    expect('usage_voice_count' in pieces[1]!.extra).toBe(false);
    // A new socket with the same voice pays nothing more.
    const later = await session(emu.speechUrl, [{ ...START, voice_setting: { voice_id: voice }, audio_setting: PCM }, say('Again.'), finish], {
      key: 'e10-fee-ws',
    });
    expect('usage_voice_count' in piecesOf(later.messages)[0]!.extra).toBe(false);
  });
});
