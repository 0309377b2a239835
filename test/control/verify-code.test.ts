import { describe, expect, it } from 'vitest';
import { codeInLargeJson } from '../../src/core/journal/summaries.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';

describe('verify by code: one reading of an entry code', () => {
  const { emu, ctl } = emulatorForFile();
  it('a successful T2A answer over 64 KB matches "code": 0 (its summary is only a byte count)', async () => {
    // About 30 s of speech as hex: well over the size up to which an answer is summarized.
    const text = 'A long sentence of speech that goes on and on for quite a while. '.repeat(30);
    const r = await t2a(emu.speechUrl, req({}, text), { key: 'verify-big' });
    expect(r.status).toBe(200);
    const journal = await ctl.call('GET', '/journal?limit=1');
    const entry = journal.body.entries[0];
    expect(entry.response.summary).toEqual({ bytes: expect.any(Number), trace_id: expect.any(String) });
    expect(entry.response.summary.bytes).toBeGreaterThan(65_536);
    expect(entry.response.code).toBe(0);

    const verified = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2', account: 'verify-big', code: 0 }, exactly: 1 });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toEqual({ ok: true, count: 1, expected: 'exactly 1' });
    const wrong = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2', account: 'verify-big', code: 2013 } });
    expect(wrong.status).toBe(409);
    expect(wrong.body.near_misses[0].differences).toEqual(['code: expected 2013, got 0']);
  });

  it('the journal view shows the code of an error answer the renderer named, and of one read from its body', async () => {
    await t2a(emu.speechUrl, req({ voice_setting: { voice_id: 'nobody-here' } }), { key: 'verify-err' });
    const entry = (await ctl.call('GET', '/journal?limit=1')).body.entries[0];
    expect(entry.response.code).toBe(2054);
    expect((await ctl.call('POST', '/verify', { request: { account: 'verify-err', code: '2054' }, exactly: 1 })).status).toBe(200);
  });
});

describe('every large JSON answer keeps its spec code', () => {
  const { emu, ctl } = emulatorForFile();
  it('get_voice over 64 KB (the published catalogue and a few more) matches "code": 0', async () => {
    const voices = (await ctl.call('GET', '/fixtures/speech-voices.json')).body.content as object[];
    const more = Array.from({ length: 30 }, (_, i) => ({
      voice_id: `Extra_Voice_${i}`,
      voice_name: `Extra ${i}`,
      language: 'en',
      description: 'One more voice.',
    }));
    expect((await ctl.call('PUT', '/fixtures/speech-voices.json', [...voices, ...more])).status).toBe(200);
    const res = await fetch(`${emu.speechUrl}/v1/get_voice`, {
      method: 'POST',
      headers: { authorization: 'Bearer verify-voices', 'content-type': 'application/json' },
      body: JSON.stringify({ voice_type: 'all' }),
    });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(65_536);
    const entry = (await ctl.call('GET', '/journal?limit=1&path=/v1/get_voice')).body.entries[0];
    expect(entry.response.summary).toEqual({ bytes: expect.any(Number), trace_id: expect.any(String) });
    expect(entry.response.code).toBe(0);
    const verified = await ctl.call('POST', '/verify', { request: { path: '/v1/get_voice', account: 'verify-voices', code: 0 }, exactly: 1 });
    expect(verified.status, verified.text).toBe(200);
  });

  it('the code is read where each family writes it, for answers too large to summarize', () => {
    expect(codeInLargeJson(`{"voices":[${'"x",'.repeat(20_000)}"y"],"trace_id":"t","base_resp":{"status_code":0,"status_msg":"success"}}`)).toBe(0);
    expect(codeInLargeJson(`{"error_code":0,"error_message":"","succeed":true,"data":{"list":[${'1,'.repeat(40_000)}2]}}`)).toBe(0);
    expect(codeInLargeJson(`{"error_code":10001,"error_message":"x","succeed":false,"data":null}`)).toBe(10001);
    expect(codeInLargeJson('[1,2,3]')).toBeUndefined();
  });
});
