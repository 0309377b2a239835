import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { bidiSession } from './bidi/bidi-helpers.js';
import { t2a, VOICE } from './helpers.js';
import { session } from './ws/ws-helpers.js';

/**
 * Integer fields typed as the real service types them (int64): a number written with a fraction or an
 * exponent is refused before any field rule, even when its value is whole (issue 33 item 2).
 */
const { emu } = emulatorForFile({ plane: 'speech' });

/** TauriTavern 2.2.0's request (issue 179, speech-02-hd): its settings serialized as floats, `"pitch": 0.0` among them. */
const TAURI_TAVERN =
  '{"model":"speech-02-hd","text":"你好，这是一次语音测试。","stream":false,"voice_setting":{"voice_id":"male-qn-qingse","pitch":0.0,"speed":1.0,"vol":1.0},"audio_setting":{"sample_rate":32000,"bitrate":128000,"format":"mp3","channel":1}}';

/** The real service's text for a decimal literal at `index` of `raw` (the body around it, a caret under it). */
function mismatch(raw: string, index: number): string {
  const from = Math.max(0, index - 16);
  const window = raw.slice(from, index + 16);
  const caret = `${'.'.repeat(index - from)}^${'.'.repeat(window.length - (index - from) - 1)}`;
  return `invalid params,Mismatch type int64 with value number ${JSON.stringify(`at index ${index}: mismatched type with value\n\n\t${window}\n\t${caret}\n`)}`;
}

const raw = (text: string) => t2a(emu.speechUrl, undefined, { raw: text });

describe('integer fields given a number with a fraction or an exponent', () => {
  it("TauriTavern's float pitch is HTTP 200 with 2013 and the decoder's text naming where; the same body with 0 passes", async () => {
    const r = await raw(TAURI_TAVERN);
    expect([r.status, codeOf(r)]).toEqual([200, 2013]);
    expect(msgOf(r)).toBe(mismatch(TAURI_TAVERN, TAURI_TAVERN.indexOf('0.0')));
    expect(msgOf(r)).toContain('"pitch\\":0.0,\\"speed\\":1.0');
    expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
    // speed and vol are decimals in the service: 1.0 passes there.
    const fixed = await raw(TAURI_TAVERN.replace('"pitch":0.0', '"pitch":0'));
    expect(codeOf(fixed)).toBe(0);
  });

  it('every integer field refuses a fraction or an exponent, before the field rules; prose with decimals does not matter', async () => {
    const body = (settings: string, text = 'Hello world.') =>
      `{"model":"speech-02-turbo","text":${JSON.stringify(text)},"voice_setting":{"voice_id":"${VOICE}","speed":1.5},"audio_setting":{"format":"mp3"}${settings}}`;
    for (const [settings, literal] of [
      [',"voice_modify":{"pitch":10.0}', '10.0'],
      [',"voice_modify":{"intensity":-5.0}', '-5.0'],
      [',"voice_modify":{"timbre":1e1}', '1e1'],
      [',"timber_weights":[{"voice_id":"female-shaonv","weight":1},{"voice_id":"male-qn-qingse","weight":5E1}]', '5E1'],
    ]) {
      const text = body(settings!);
      const r = await raw(text);
      expect([codeOf(r), msgOf(r)], settings).toEqual([2013, mismatch(text, text.indexOf(literal!))]);
    }
    for (const field of ['sample_rate":32000.0', 'bitrate":1.28e5', 'channel":1.0']) {
      const text = `{"model":"speech-02-turbo","text":"Hi.","voice_setting":{"voice_id":"${VOICE}"},"audio_setting":{"format":"mp3","${field}}}`;
      const r = await raw(text);
      expect([codeOf(r), msgOf(r)], field).toEqual([2013, mismatch(text, text.indexOf(field.split(':')[1]!))]);
    }
    // Before the field rules: a bad speed after it is not what is named.
    const both = `{"model":"speech-02-turbo","text":"Hi.","voice_setting":{"voice_id":"${VOICE}","pitch":1.0,"speed":9}}`;
    expect(msgOf(await raw(both))).toBe(mismatch(both, both.indexOf('1.0')));
    // Whole numbers pass; decimals in the text and in decimal fields are not integers of the service.
    const ok = await raw(body(',"voice_modify":{"pitch":10}', 'Version 2.0 costs 1e3 dollars.'));
    expect(codeOf(ok)).toBe(0);
  });

  it('on both speech sockets the same code and text come in task_failed; async creation refuses it too', async () => {
    const start = `{"event":"task_start","model":"speech-02-hd","voice_setting":{"voice_id":"${VOICE}","pitch":0.0}}`;
    const expected = { status_code: 2013, status_msg: mismatch(start, start.indexOf('0.0')) };
    const ws = await session(emu.speechUrl, [start, { event: 'task_continue', text: 'Hi.' }]);
    const failed = ws.messages.at(-1);
    expect(ws.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expect(failed.base_resp).toEqual(expected);
    expect(ws.close.code).toBe(1000);
    const bidi = await bidiSession(emu.speechUrl, [start]);
    console.log('bidi done', JSON.stringify(bidi.messages));
    expect(bidi.messages.at(-1)).toMatchObject({ event: 'task_failed', base_resp: expected });

    const okStart = start.replace('"pitch":0.0', '"pitch":0');
    const fine = await session(emu.speechUrl, [okStart, { event: 'task_continue', text: 'Hi.' }, { event: 'task_finish' }]);
    expect(fine.messages.some((m) => m.event === 'task_finished')).toBe(true);

    const api = speechApi(emu.speechUrl, 'int-async');
    const asyncText = `{"model":"speech-02-hd","text":"Hi.","voice_setting":{"voice_id":"${VOICE}","pitch":2.0},"audio_setting":{"audio_sample_rate":32000}}`;
    const task = await api.raw('/v1/t2a_async_v2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: asyncText });
    expect([codeOf(task), msgOf(task)]).toEqual([2013, mismatch(asyncText, asyncText.indexOf('2.0'))]);
    const rateText = `{"model":"speech-02-hd","text":"Hi.","voice_setting":{"voice_id":"${VOICE}"},"audio_setting":{"audio_sample_rate":3.2e4}}`;
    const rate = await api.raw('/v1/t2a_async_v2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: rateText });
    expect(msgOf(rate)).toBe(mismatch(rateText, rateText.indexOf('3.2e4')));
  });
});
