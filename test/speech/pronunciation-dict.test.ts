import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { req, t2a } from './helpers.js';
import { session, START } from './ws/ws-helpers.js';

/** `pronunciation_dict` in a shape other than `{tone: [...]}` (speech-current.md section 6, E17). */
const { emu } = emulatorForFile({ plane: 'speech' });
const MISMATCH = 'invalid params, Mismatch type open_platform.PronunciationDict with value array';
/** What mmx up to 1.0.16 sent for `--pronunciation omg/oh my god`. */
const OLD_MMX = [{ tone: 'oh my god', text: 'omg' }];
const pcm = { audio_setting: { format: 'pcm', sample_rate: 8000 } };

describe('pronunciation_dict shapes', () => {
  it('an array is HTTP 200 with 2013 and the real service text, whole and streamed, before any other field rule', async () => {
    const whole = await t2a(emu.speechUrl, req({ ...pcm, pronunciation_dict: OLD_MMX }, 'Say omg.'));
    expect([whole.status, codeOf(whole), msgOf(whole)]).toEqual([200, 2013, MISMATCH]);
    expect(whole.headers.get('trace-id')).toBe(whole.body.trace_id);
    const streamed = await t2a(emu.speechUrl, req({ stream: true, pronunciation_dict: ['omg/oh my god'] }, 'Say omg.'));
    expect(streamed.headers.get('content-type')).toMatch(/^application\/json/);
    expect([streamed.status, codeOf(streamed), msgOf(streamed)]).toEqual([200, 2013, MISMATCH]);
    const alsoBadSpeed = await t2a(emu.speechUrl, req({ voice_setting: { voice_id: 'male-qn-qingse', speed: 9 }, pronunciation_dict: [] }));
    expect(msgOf(alsoBadSpeed)).toBe(MISMATCH);
  });

  it('other non-objects name their type; null is "not given"; the object works', async () => {
    for (const [value, kind] of [
      ['omg/oh my god', 'string'],
      [3, 'number'],
      [true, 'boolean'],
    ] as const) {
      const r = await t2a(emu.speechUrl, req({ ...pcm, pronunciation_dict: value }));
      expect([codeOf(r), msgOf(r)]).toEqual([2013, `invalid params, Mismatch type open_platform.PronunciationDict with value ${kind}`]);
    }
    expect(codeOf(await t2a(emu.speechUrl, req({ ...pcm, pronunciation_dict: null })))).toBe(0);
    const ok = await t2a(emu.speechUrl, req({ ...pcm, pronunciation_dict: { tone: ['omg/oh my god'] } }, 'Say omg.'));
    expect(codeOf(ok)).toBe(0);
    const plain = await t2a(emu.speechUrl, req(pcm, 'Say omg.'));
    const [bytes, plainBytes] = [ok, plain].map((r) => Buffer.from(r.body.data.audio, 'hex').length);
    expect(ok.body.extra_info.audio_size).toBe(bytes);
    expect(bytes).toBeGreaterThan(plainBytes!); // the dictionary is applied: "oh my god" takes longer than "omg"
  });

  it('on the WebSocket the same code and text come in task_failed, then close 1000; async creation refuses it too', async () => {
    const ws = await session(emu.speechUrl, [
      { ...START, pronunciation_dict: OLD_MMX },
      { event: 'task_continue', text: 'Say omg.' },
    ]);
    const failed = ws.messages.at(-1);
    expect([failed.event, failed.base_resp]).toEqual(['task_failed', { status_code: 2013, status_msg: MISMATCH }]);
    expect(ws.messages.some((m) => m.event === 'task_started')).toBe(false);
    expect(ws.close.code).toBe(1000);

    const api = speechApi(emu.speechUrl, 'dict-async');
    const task = await api.post('/v1/t2a_async_v2', {
      model: 'speech-02-hd',
      text: 'Say omg.',
      voice_setting: { voice_id: 'male-qn-qingse' },
      pronunciation_dict: OLD_MMX,
    });
    expect([codeOf(task), msgOf(task)]).toEqual([2013, MISMATCH]);
  });
});
