import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { t2a } from '../helpers.js';
import { session, START } from './ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const PCM = { audio_setting: { format: 'pcm', sample_rate: 8000 } };
const start = { ...START, ...PCM };
const text = (t: unknown) => ({ event: 'task_continue', text: t });
const finish = { event: 'task_finish' };
const last = (r: { messages: any[] }) => r.messages.at(-1);

/** A session that fails: the last message is task_failed with this code, then the server closes. */
function expectFailed(r: Awaited<ReturnType<typeof session>>, code: number, msg?: string | RegExp, closeCode = 1000) {
  expect(last(r).event).toBe('task_failed');
  expect(last(r).base_resp.status_code).toBe(code);
  if (typeof msg === 'string') expect(last(r).base_resp.status_msg).toBe(msg);
  else if (msg) expect(last(r).base_resp.status_msg).toMatch(msg);
  expect(r.close.code).toBe(closeCode);
}

describe('task_start is checked by the rules and messages of the HTTP body', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['unknown model', { model: 'speech-2.5-hd-preview' }],
    ['whisper on 2.8', { voice_setting: { voice_id: 'male-qn-qingse', emotion: 'whisper' } }],
    ['speed out of range', { voice_setting: { voice_id: 'male-qn-qingse', speed: 3 } }],
    ['sample rate', { audio_setting: { sample_rate: 48000 } }],
    ['pronunciation_dict as an array', { pronunciation_dict: ['omg/oh my god'] }],
    ['missing voice_id', { voice_setting: {} }],
    ['unknown voice', { voice_setting: { voice_id: 'nobody-here' } }],
  ];
  it.each(cases)('%s: task_failed with the HTTP code and text, close 1000', async (_name, fields) => {
    const body = { ...START, ...fields };
    const http = await t2a(emu.speechUrl, { ...body, event: undefined, text: 'Hello', stream: true }, { key: 'speech-ws-key' });
    expect(http.body.base_resp.status_code).not.toBe(0);
    const r = await session(emu.speechUrl, [body, text('Hello'), finish]);
    expect(r.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expectFailed(r, http.body.base_resp.status_code, http.body.base_resp.status_msg);
  });

  it('a mixed voice by timbre_weights with an empty voice_id is accepted', async () => {
    const r = await session(emu.speechUrl, [
      {
        ...start,
        voice_setting: { voice_id: '' },
        timbre_weights: [
          { voice_id: 'male-qn-qingse', weight: 1 },
          { voice_id: 'female-shaonv', weight: 1 },
        ],
      },
      text('Mixed.'),
      finish,
    ]);
    expect(last(r).event).toBe('task_finished');
  });
});

describe('soft errors keep the session (2203, 2204, 2205)', () => {
  it('empty text is 2203 and too long a text 2204, as task_continued with data null and is_final; later pieces still synthesize', async () => {
    const r = await session(emu.speechUrl, [start, text(''), text('   '), text('x'.repeat(10_001)), text('Still here.'), finish]);
    const soft = r.messages.filter((m) => m.event === 'task_continued' && m.base_resp.status_code !== 0);
    expect(soft.map((m) => m.base_resp.status_code)).toEqual([2203, 2203, 2204]);
    for (const m of soft) expect(m).toMatchObject({ data: null, is_final: true });
    expect(soft[0].base_resp.status_msg).toBe('empty text, skipped: the text is empty');
    expect(soft[2].base_resp.status_msg).toMatch(/^character limit exceeded, skipped: the text has 10001 characters/);
    expect(r.messages.filter((m) => m.is_final && m.base_resp.status_code === 0)).toHaveLength(1);
    expect(last(r).event).toBe('task_finished');
    expect(r.close.code).toBe(1000);
  });

  it('more than 20 pieces waiting: the next ones get 2205 and the session goes on', async () => {
    // A long first piece keeps the queue busy while the others arrive.
    const many = [text('A long first piece that keeps the synthesis busy. '.repeat(40)), ...Array.from({ length: 24 }, (_, i) => text(`Piece ${i}.`))];
    const r = await session(emu.speechUrl, [start, ...many, finish]);
    const refused = r.messages.filter((m) => m.base_resp.status_code === 2205);
    const answered = r.messages.filter((m) => m.is_final && m.base_resp.status_code === 0);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length + answered.length).toBe(25);
    expect(refused[0]).toMatchObject({ event: 'task_continued', data: null, is_final: true });
    expect(refused[0].base_resp.status_msg).toBe('request limit exceeded: 20 pieces are already waiting');
    expect(last(r).event).toBe('task_finished');
  });
});

describe('order of events and malformed messages', () => {
  const cases: [string, unknown[], number, RegExp][] = [
    ['task_continue before task_start', [text('Hi')], 2202, /^illegal event: task_continue before task_started/],
    ['task_finish before task_start', [finish], 2202, /^illegal event: task_finish before task_started/],
    ['a second task_start', [start, start], 2202, /^illegal event: task_start was already received/],
    ['task_continue after task_finish', [start, text('Still synthesizing this.'), finish, text('late')], 2202, /illegal event/],
    ['an unknown event', [start, { event: 'task_cancel' }], 2202, /^illegal event: unknown event "task_cancel"/],
    ['no event field', [{ model: 'speech-2.8-hd' }], 2202, /^illegal event: the message has no event field/],
    ['not JSON', ['{nope'], 2013, /^invalid params, message is not valid JSON/],
    ['not an object', ['[1,2]'], 2013, /^invalid params, message must be a JSON object/],
    ['a binary frame', [Buffer.from([1, 2, 3])], 2013, /^invalid params, binary frames are not accepted/],
    ['text of the wrong type', [start, text(42)], 2013, /^invalid params, text must be a string/],
  ];
  it.each(cases)('%s: task_failed, then close 1000', async (_name, frames, code, msg) => {
    const r = await session(emu.speechUrl, frames);
    expectFailed(r, code, msg);
  });
});

describe('authentication (rule 12.2) and faults on the upgrade', () => {
  it('no key, a disabled key: the upgrade succeeds, the only message is task_failed 1004, then close 1000', async () => {
    for (const key of [null, 'emulator-disabled-key']) {
      const r = await session(emu.speechUrl, [start], { key });
      expect(r.messages).toHaveLength(1);
      expectFailed(r, 1004, /^login fail/);
    }
  });

  it('close_ws closes with its code before any message', async () => {
    const r = await session(emu.speechUrl, [start], { headers: { 'X-Emulator-Fault': 'close_ws=4001' } });
    expect(r.messages).toHaveLength(0);
    expect(r.close.code).toBe(4001);
  });

  it('code: task_failed with it; 1011 after an internal error code, 1000 after a client-caused one', async () => {
    expectFailed(await session(emu.speechUrl, [start], { headers: { 'X-Emulator-Fault': 'code=1000' } }), 1000, 'unknown error', 1011);
    expectFailed(await session(emu.speechUrl, [start], { headers: { 'X-Emulator-Fault': 'code=1002' } }), 1002, undefined, 1000);
  });

  it('status refuses the upgrade itself with that HTTP status and the speech error body', async () => {
    const r = await session(emu.speechUrl, [start], { headers: { 'X-Emulator-Fault': 'status=503' } });
    expect(r.refusedStatus).toBe(503);
    expect(JSON.parse(r.refusedBody!).base_resp.status_code).toBe(1000);
  });

  it('a queued fault rule for the path is taken by the next upgrade', async () => {
    await ctl.addFault({ path: '/ws/v1/t2a_v2', fault: { code: 1039 } });
    expectFailed(await session(emu.speechUrl, [start]), 1039, 'token limit');
    expect(last(await session(emu.speechUrl, [start, text('Hi.'), finish])).event).toBe('task_finished');
  });

  it('cut_after_chunks drops the connection without a close frame after that many audio messages', async () => {
    const r = await session(emu.speechUrl, [start, text('A sentence long enough for several chunks of audio.'), finish], {
      headers: { 'X-Emulator-Fault': 'cut_after_chunks=2' },
    });
    expect(r.messages.filter((m) => m.data?.audio)).toHaveLength(2);
    expect(r.close.code).toBe(1006);
    // The socket's stream guard counts the audio messages and notes the cut, as for every streamed answer.
    const j = await ctl.journal({ path: '/ws/v1/t2a_v2', limit: 1 });
    expect(j.body.entries[0]).toMatchObject({ chunks: 2, note: 'connection cut after 2 chunks (fault)' });
  });

  it('a plain GET without Upgrade is 426 in the speech error shape', async () => {
    const res = await fetch(`${emu.speechUrl}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer k' } });
    expect(res.status).toBe(426);
    expect(((await res.json()) as any).base_resp.status_code).toBe(2013);
  });

  it('a plain GET cannot carry close_ws or a fault code: both are reported ignored, on both speech sockets', async () => {
    for (const path of ['/ws/v1/t2a_v2', '/ws/v1/t2a_v2_bidi']) {
      const res = await fetch(`${emu.speechUrl}${path}`, { headers: { authorization: 'Bearer k', 'x-emulator-fault': 'close_ws=4000;code=1002' } });
      expect(res.status, path).toBe(426);
      expect(res.headers.get('x-emulator-fault-ignored'), path).toMatch(/close_ws/);
      expect(res.headers.get('x-emulator-fault-ignored'), path).toMatch(/code/);
      await res.arrayBuffer();
    }
  });
});

describe('billing per piece', () => {
  it('each piece is charged as an HTTP request of its text; a balance too small is task_failed 1008', async () => {
    const key = 'speech-ws-billing';
    await ctl.putAccount(key, { balance_micro: 10_000 });
    const before = (await ctl.account(key)).body.balance_micro;
    const r = await session(emu.speechUrl, [start, text('Hello world.'), text('Again.'), finish], { key });
    const used = r.messages.filter((m) => m.extra_info).reduce((a, m) => a + m.extra_info.usage_characters, 0);
    expect(used).toBe(18);
    expect((await ctl.account(key)).body.balance_micro).toBe(before - used * 100);
    await ctl.putAccount(key, { balance_micro: 500 });
    const poor = await session(emu.speechUrl, [start, text('Hi.'), text('This one costs more than is left.'), finish], { key });
    expect(poor.messages.filter((m) => m.is_final)).toHaveLength(1);
    expectFailed(poor, 1008);
  });
});
