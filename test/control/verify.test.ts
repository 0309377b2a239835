import { describe, expect, it } from 'vitest';
import { call, control, emulatorForFile } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';

describe('verify', () => {
  for (const token of [undefined, 'verify-token']) {
    describe(`control token ${token ? 'on' : 'off'}`, () => {
      const { emu, ctl } = emulatorForFile({ start: token ? { controlToken: token } : {} });
      it(`counts matching requests and answers 200, or 409 with near misses (token ${token ? 'on' : 'off'})`, async () => {
        await t2a(emu.speechUrl, req({}, 'First one.'), { key: 'verify-a' });
        await t2a(emu.speechUrl, req({}, 'Second one.'), { key: 'verify-a' });
        await t2a(emu.speechUrl, req({ voice_setting: { voice_id: 'nobody-here' } }), { key: 'verify-b' });
        await call(`${emu.platformUrl}/v1/text-to-speech`, { json: { voice_id: 'female_bright', generate_text: 'Hi.' }, headers: { 'x-api-key': 'verify-a' } });

        const twice = await ctl.call('POST', '/verify', {
          request: { service: 'speech', method: 'post', path: '/v1/t2a_v2', account: 'verify-a', status: 200, code: 0 },
          exactly: 2,
        });
        expect(twice.status, twice.text).toBe(200);
        expect(twice.body).toEqual({ ok: true, count: 2, expected: 'exactly 2' });
        // a JSON subset of the request body
        const second = await ctl.call('POST', '/verify', {
          request: { path: '/v1/t2a_v2', body: { text: 'Second one.', voice_setting: { voice_id: 'male-qn-qingse' } } },
          exactly: 1,
        });
        expect(second.body.count).toBe(1);
        // default expectation: at least once
        expect((await ctl.call('POST', '/verify', { request: { code: 2054 } })).body).toMatchObject({ ok: true, count: 1, expected: 'at least 1' });
        expect((await ctl.call('POST', '/verify', { request: { service: 'platform' }, at_least: 1, at_most: 1 })).status).toBe(200);

        const miss = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2', account: 'verify-b', code: 0 }, at_least: 1 });
        expect(miss.status).toBe(409);
        expect(miss.body).toMatchObject({ ok: false, count: 0, expected: 'at least 1', error: { message: expect.stringContaining('found 0') } });
        const near = miss.body.near_misses;
        expect(near.length).toBeGreaterThanOrEqual(3);
        // the nearest differ in one field: verify-b's request (code), then verify-a's (account); the platform call is farther
        expect(near[0].differences).toEqual(['code: expected 0, got 2054']);
        expect(near[1].differences).toHaveLength(1);
        expect(near[1].differences[0]).toMatch(/^account: expected veri…/);
        expect(near.at(-1).entry.path).toBe('/v1/text-to-speech');
        expect(near.every((n: { entry: Record<string, unknown> }) => !('accountId' in n.entry))).toBe(true);
        expect(JSON.stringify(miss.body)).not.toContain('verify-b"');

        const tooMany = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2' }, at_most: 2 });
        expect(tooMany.status).toBe(409);
        expect(tooMany.body.count).toBe(3);
      });
    });
  }

  describe('control token on', () => {
    const { emu, ctl } = emulatorForFile({ plane: 'speech', start: { controlToken: 'verify-token' } });
    it('a bad matcher is 400 naming the field; without the token (when set) 401', async () => {
      const cases: [unknown, RegExp][] = [
        [{ request: { stauts: 200 } }, /request.*stauts/],
        [{ request: { status: 'ok' } }, /request\.status/],
        [{ request: { path: 'v1/x' } }, /request\.path/],
        [{ request: {}, exactly: -1 }, /exactly/],
        [{ request: {}, exactly: 1, at_least: 1 }, /exactly cannot be combined/],
        [{ request: {}, at_least: 3, at_most: 1 }, /at_least/],
        [{ request: { account: ' ' } }, /non-empty key/],
        [{}, /request/],
      ];
      for (const [body, re] of cases) {
        const r = await ctl.call('POST', '/verify', body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.error.message).toMatch(re);
        expect(r.body.error.message).toMatch(/^verify/);
      }
      expect((await control(emu.speechUrl).call('POST', '/verify', { request: {} })).status).toBe(401);
    });
  });
});
