import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { t2a } from '../helpers.js';
import { until } from '../ws/ws-helpers.js';
import { BIDI_KEY, BIDI_START, bidiClient, bidiSession, startedClient } from './bidi-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });

const PCM = { ...BIDI_START, audio_setting: { format: 'pcm', sample_rate: 8000 } };
const text = (t: unknown) => ({ event: 'task_continue', text: t });
const FLUSH = { event: 'task_flush' };
const FINISH = { event: 'task_finish' };
const last = (r: { messages: any[] }) => r.messages.at(-1);

/** The last message is task_failed with this code on the connection's trace, then the server closes. */
function expectFailed(r: { messages: any[]; close: { code: number } }, code: number, msg?: string | RegExp, closeCode = 1000) {
  const failed = last(r);
  expect(failed.event).toBe('task_failed');
  expect(failed.base_resp.status_code).toBe(code);
  if (typeof msg === 'string') expect(failed.base_resp.status_msg).toBe(msg);
  else if (msg) expect(failed.base_resp.status_msg).toMatch(msg);
  if (r.messages.length > 1) expect(failed.trace_id).toBe(r.messages[0].trace_id);
  expect(failed.connect_id).toMatch(/^\d{15}$/);
  expect(r.close.code).toBe(closeCode);
}

describe('task_start is validated exactly as on /ws/v1/t2a_v2 (E5)', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['unknown model', { model: 'speech-2.5-hd-preview' }],
    ['whisper on 2.8', { voice_setting: { voice_id: 'male-qn-qingse', emotion: 'whisper' } }],
    ['sample rate', { audio_setting: { sample_rate: 48000 } }],
    ['pronunciation_dict as an array', { pronunciation_dict: ['omg/oh my god'] }],
    ['unknown voice', { voice_setting: { voice_id: 'nobody-here' } }],
  ];
  it.each(cases)('%s: task_failed with the HTTP code and text, close 1000', async (_name, fields) => {
    const body = { ...BIDI_START, ...fields };
    const http = await t2a(emu.speechUrl, { ...body, event: undefined, text: 'Hello', stream: true }, { key: BIDI_KEY });
    expect(http.body.base_resp.status_code).not.toBe(0);
    const r = await bidiSession(emu.speechUrl, [body, text('Hello.'), FINISH]);
    expect(r.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expectFailed(r, http.body.base_resp.status_code, http.body.base_resp.status_msg);
  });

  it('a session_id that is not a string is 2013 naming it', async () => {
    for (const session_id of [42, null, { a: 1 }]) {
      const r = await bidiSession(emu.speechUrl, [{ ...BIDI_START, session_id }]);
      expectFailed(r, 2013, /^invalid params, session_id must be a string/);
    }
  });
});

describe('soft refusals keep the session (E8)', () => {
  it('2204: a task_continue over 10,000 code points is refused as task_continued with data null and is_final, on the connection trace, and its text is not added', async () => {
    const c = await startedClient(emu.speechUrl, PCM);
    c.send(text('Kept '));
    c.send(text('x'.repeat(10_001)));
    await c.waitFor((m) => m.event === 'task_continued');
    const refusal = c.messages.at(-1);
    expect(refusal).toMatchObject({ event: 'task_continued', data: null, is_final: true, trace_id: c.messages[0].trace_id });
    expect(refusal.base_resp).toEqual({
      status_code: 2204,
      status_msg: 'character limit exceeded, skipped: the text has 10001 characters; a task_continue may have at most 10000',
    });
    c.send(text('text.'));
    await c.waitFor((m) => m.event === 'sentence_end');
    const sentence = c.messages.find((m) => m.is_final && m.base_resp.status_code === 0);
    expect(sentence.extra_info.usage_characters).toBeLessThan(20);
    c.ws.close();
  });

  it('2205: text that would raise the pending text over bidi.max_pending_chars is refused softly and can be sent again', async () => {
    const key = 'speech-bidi-pending';
    await ctl.putAccount(key, { speech_settings: { bidi: { max_pending_chars: 30 } } });
    const c = await startedClient(emu.speechUrl, PCM, { key });
    c.send(text('abc def ghi jkl mno'));
    c.send(text(' pqr stu vwx yz ab'));
    await c.waitFor((m) => m.base_resp.status_code === 2205);
    const refusal = c.messages.at(-1);
    expect(refusal).toMatchObject({ event: 'task_continued', data: null, is_final: true });
    expect(refusal.base_resp.status_msg).toBe(
      'request limit exceeded: 19 characters are waiting and this text has 18; at most 30 may wait: send it again later',
    );
    c.send(FLUSH);
    await c.waitFor((m) => m.event === 'task_flushed');
    c.send(text(' pqr stu vwx yz ab'));
    c.send(FLUSH);
    await c.waitFor((m) => m.event === 'task_flushed', 2);
    expect(c.events().filter((e) => e === 'sentence_end')).toHaveLength(2);
    c.ws.close();
  });
});

describe('fatal errors and order (E9)', () => {
  const cases: [string, unknown[], number, RegExp][] = [
    ['a second task_start', [PCM, PCM], 2206, /^illegal event order: task_start was already received/],
    ['task_continue before task_start', [text('Hi')], 2202, /^illegal event: task_continue before task_started/],
    ['task_flush before task_start', [FLUSH], 2202, /^illegal event: task_flush before task_started/],
    ['task_cancel before task_start', [{ event: 'task_cancel' }], 2202, /^illegal event: task_cancel before task_started/],
    ['task_finish before task_start', [FINISH], 2202, /^illegal event: task_finish before task_started/],
    ['an unknown event', [PCM, { event: 'task_pause' }], 2202, /^illegal event: unknown event "task_pause"/],
    ['no event field', [{ model: 'speech-2.8-hd' }], 2202, /^illegal event: the message has no event field/],
    ['not JSON', ['{nope'], 2013, /^invalid params, message is not valid JSON/],
    ['a binary frame', [Buffer.from([1, 2, 3])], 2013, /^invalid params, binary frames are not accepted/],
    ['a missing text', [PCM, { event: 'task_continue' }], 2013, /^invalid params, text /],
    ['text of the wrong type', [PCM, text(42)], 2013, /^invalid params, text must be a string/],
  ];
  it.each(cases)('%s: task_failed, then close 1000', async (_name, frames, code, msg) => {
    expectFailed(await bidiSession(emu.speechUrl, frames), code, msg);
  });

  it('an invalid pause marker in a sentence: sentence_start, then task_failed 2013', async () => {
    const r = await bidiSession(emu.speechUrl, [PCM, text('<#1#>Hello. Never said.')]);
    expect(r.messages.map((m) => m.event)).toEqual(['connected_success', 'task_started', 'sentence_start', 'task_failed']);
    expectFailed(r, 2013, /pause marker <#1#> must sit between two pronounceable pieces of text/);
  });

  it('1042 is computed on the sentence text', async () => {
    const r = await bidiSession(emu.speechUrl, [PCM, text('A clean sentence. Bad\u0001\u0001\u0001\u0001.')]);
    expect(r.messages.filter((m) => m.event === 'sentence_end')).toHaveLength(1);
    expectFailed(r, 1042);
  });

  it('a balance too small for a sentence is task_failed 1008 after the sentences it could pay', async () => {
    const key = 'speech-bidi-poor';
    await ctl.putAccount(key, { balance_micro: 500 });
    const r = await bidiSession(emu.speechUrl, [PCM, text('Hi. This one costs more than is left.')], { key });
    expect(r.messages.filter((m) => m.event === 'sentence_end')).toHaveLength(1);
    expectFailed(r, 1008);
  });
});

describe('idle time and pings on the emulator clock (E9)', () => {
  it('120 s without a client frame or audio: task_failed 2201, close 1000; a client ping gets a pong and restarts the wait', async () => {
    const c = await startedClient(emu.speechUrl, PCM, { key: 'speech-bidi-idle' });
    await ctl.advance(119_000);
    const pong = new Promise((r) => c.ws.once('pong', r));
    c.ws.ping();
    await pong;
    await ctl.advance(119_999);
    expect(c.events()).toEqual(['connected_success', 'task_started']);
    c.send(text('Still here.'));
    await c.waitFor((m) => m.event === 'sentence_end');
    await ctl.advance(119_999);
    expect(c.events().at(-1)).toBe('sentence_end');
    await ctl.advance(1);
    const closed = await c.closed;
    expect(c.messages.at(-1)).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2201, status_msg: 'timeout disconnect' } });
    expect(closed.code).toBe(1000);
    const entry = (await ctl.journal({ path: '/ws/v1/t2a_v2_bidi' })).body.entries.find((e: any) =>
      e.response.summary?.timers?.some((t: any) => t.timer === 'idle'),
    );
    expect(entry.response.summary.frames.some((f: any) => f.dir === 'in' && f.event === '(ping)')).toBe(true);
  });

  it('the idle clock does not run while a sentence is being synthesised; it restarts when the queue is done', async () => {
    const key = 'speech-bidi-idle-busy';
    await ctl.putAccount(key, { speech_settings: { bidi: { max_sentence_chars: 9_000 } } });
    const c = await startedClient(emu.speechUrl, PCM, { key });
    c.send(text(`${'A long sentence that keeps the synthesis busy '.repeat(80)}for a while.`));
    await c.waitFor((m) => m.event === 'task_continued');
    await ctl.advance(200_000);
    expect(c.events()).not.toContain('task_failed');
    c.send({ event: 'task_cancel' });
    await c.waitFor((m) => m.event === 'task_canceled');
    await ctl.advance(119_999);
    expect(c.events().at(-1)).toBe('task_canceled');
    await ctl.advance(1);
    await c.closed;
    expect(c.messages.at(-1).base_resp.status_code).toBe(2201);
  });

  it('the server never pings', async () => {
    const c = await startedClient(emu.speechUrl, PCM);
    let pinged = false;
    c.ws.on('ping', () => (pinged = true));
    await ctl.advance(60_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(pinged).toBe(false);
    c.ws.close();
  });
});

describe('authentication and faults on the upgrade (E5, E22)', () => {
  it('no key, a disabled key: the upgrade succeeds, the only message is task_failed 1004 with a connect_id, then close 1000', async () => {
    for (const key of [null, 'emulator-disabled-key']) {
      const r = await bidiSession(emu.speechUrl, [PCM], { key });
      expect(r.messages).toHaveLength(1);
      expectFailed(r, 1004, /^login fail/);
    }
  });

  it('code: task_failed with it; 1011 after an internal error code, 1000 after a client-caused one', async () => {
    expectFailed(await bidiSession(emu.speechUrl, [PCM], { headers: { 'X-Emulator-Fault': 'code=1000' } }), 1000, 'unknown error', 1011);
    expectFailed(await bidiSession(emu.speechUrl, [PCM], { headers: { 'X-Emulator-Fault': 'code=1001' } }), 1001, undefined, 1011);
    expectFailed(await bidiSession(emu.speechUrl, [PCM], { headers: { 'X-Emulator-Fault': 'code=1002' } }), 1002, undefined, 1000);
  });

  it('status refuses the upgrade with that HTTP status; close_ws closes with its code', async () => {
    const refused = await new Promise<number>((resolve) => {
      void bidiClient(emu.speechUrl, { headers: { 'X-Emulator-Fault': 'status=503' } }).catch((err: Error) =>
        resolve(Number(/(\d{3})/.exec(err.message)?.[1])),
      );
    });
    expect(refused).toBe(503);
    const r = await bidiSession(emu.speechUrl, [PCM], { headers: { 'X-Emulator-Fault': 'close_ws=4001' } });
    expect(r.messages).toHaveLength(0);
    expect(r.close.code).toBe(4001);
  });

  it('cut_after_chunks drops the connection without a close frame after that many audio messages', async () => {
    const r = await bidiSession(emu.speechUrl, [PCM, text('A sentence long enough for several chunks of audio, surely. And more.'), FINISH], {
      headers: { 'X-Emulator-Fault': 'cut_after_chunks=2' },
    });
    expect(r.messages.filter((m) => m.data?.audio)).toHaveLength(2);
    expect(r.close.code).toBe(1006);
  });

  it('a plain GET without Upgrade is 426 in the speech error shape', async () => {
    const res = await fetch(`${emu.speechUrl}/ws/v1/t2a_v2_bidi`, { headers: { authorization: 'Bearer k' } });
    expect(res.status).toBe(426);
    expect(((await res.json()) as any).base_resp.status_code).toBe(2013);
  });
});

describe('the journal (E22)', () => {
  it('records every frame in and out, the cuts and the timer firings, without the key', async () => {
    const key = 'speech-bidi-journal';
    const c = await startedClient(emu.speechUrl, PCM, { key });
    c.send(text('One. Two'));
    await until(async () => c.events().includes('sentence_end'));
    await ctl.advance(5_000);
    await c.waitFor((m) => m.event === 'sentence_end', 2);
    c.send(FINISH);
    await c.closed;
    const account = (await ctl.accountState(key)).account;
    const entry = (await ctl.journal({ path: '/ws/v1/t2a_v2_bidi' })).body.entries.find((e: any) => e.account === account);
    expect(entry.status).toBe(101);
    const log = entry.response.summary;
    expect(log.connect_id).toBe(c.messages[0].connect_id);
    expect(log.frames_total).toBe(c.messages.length + 3);
    expect(log.frames.filter((f: any) => f.dir === 'out').map((f: any) => f.event)).toEqual(c.events());
    expect(log.frames.filter((f: any) => f.dir === 'in').map((f: any) => f.event)).toEqual(['task_start', 'task_continue', 'task_finish']);
    expect(log.frames.find((f: any) => f.is_final)).toMatchObject({ sentence: 1, audio_bytes: expect.any(Number) });
    expect(log.cuts.map((x: any) => [x.reason, x.text, x.sentence])).toEqual([
      ['final', 'One.', 1],
      ['backstop', 'Two', 2],
    ]);
    expect(log.timers).toEqual([expect.objectContaining({ timer: 'silence', cuts: 0 }), expect.objectContaining({ timer: 'backstop', cuts: 1 })]);
    expect(JSON.stringify(entry)).not.toContain(key);
  });
});

describe('the AsyncAPI document', () => {
  it('lists the bidi channel with its client messages', async () => {
    const doc = (await ctl.call('GET', '/asyncapi.json')).body;
    const channel = Object.values(doc.channels as Record<string, any>).find((ch) => ch.address === '/ws/v1/t2a_v2_bidi');
    expect(Object.keys(channel.messages)).toEqual(expect.arrayContaining(['task_start', 'task_continue', 'task_flush', 'task_cancel', 'task_finish']));
    expect(channel.messages.task_start.payload.properties.session_id).toBeTruthy();
  });
});
