import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { t2a } from './helpers.js';

/** A speech body the JSON parser refuses: answered with the spec's 2013 as before, and journaled as bounded text. */
const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });

const newest = async () => (await ctl.journal({ limit: 1 })).body.entries[0];
const verify = (request: Record<string, unknown>) => ctl.call('POST', '/verify', { request, exactly: 1 });

describe('a speech body that is not JSON', () => {
  it('on /v1/t2a_v2: the same 2013 answer, the text in the journal, verify matches it by path, code and body', async () => {
    const raw = '{"model": "speech-02-hd", "text": "Half a body';
    const r = await t2a(emu.speechUrl, null, { raw });
    expect(r.status).toBe(200);
    expect(r.body.base_resp).toEqual({
      status_code: 2013,
      status_msg: "invalid params, request body is not valid JSON (Body is not valid JSON but content-type is set to 'application/json')",
    });

    const entry = await newest();
    expect(entry).toMatchObject({ method: 'POST', path: '/v1/t2a_v2', listener: 'speech', status: 200, response: { code: 2013 } });
    expect(entry.request.body).toBe(raw);
    expect((await verify({ path: '/v1/t2a_v2', code: 2013 })).body).toMatchObject({ ok: true, count: 1 });
    expect((await verify({ path: '/v1/t2a_v2', code: 2013, body: raw })).body).toMatchObject({ ok: true, count: 1 });
  });

  it('a long one is kept bounded; other speech routes and the backup listener journal it too', async () => {
    const long = `not json ${'x'.repeat(400)}`;
    await t2a(emu.speechUrl, null, { raw: long });
    expect((await newest()).request.body).toBe(`${long.slice(0, 64)}…(${long.length} chars)`);

    const design = await call(`${emu.speechUrl}/v1/voice_design`, {
      method: 'POST',
      body: '{prompt: nope}',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bad-json-key' },
    });
    expect(design.body.base_resp.status_code).toBe(2013);
    expect(await newest()).toMatchObject({ path: '/v1/voice_design', request: { body: '{prompt: nope}' } });

    await t2a(emu.speechBackupUrl, null, { raw: '{"text": ' });
    expect((await verify({ listener: 'speech-backup', path: '/v1/t2a_v2', code: 2013, body: '{"text": ' })).status).toBe(200);
  });

  it('valid JSON, an empty body and a prototype key answer as before', async () => {
    const empty = await t2a(emu.speechUrl, null, { raw: '' });
    expect(empty.body.base_resp).toEqual({ status_code: 2013, status_msg: 'invalid params, request body is empty' });
    expect((await newest()).request.body).toBeUndefined();

    const poisoned = await t2a(emu.speechUrl, null, { raw: '{"__proto__": {"x": 1}}' });
    expect(poisoned.body.base_resp.status_code).toBe(2013);
    expect(poisoned.body.base_resp.status_msg).toMatch(/^invalid params, request body is not valid JSON/);

    const ok = await t2a(emu.speechUrl, { model: 'speech-02-turbo', text: 'Fine.', voice_setting: { voice_id: 'nobody' } });
    expect(ok.body.base_resp.status_code).toBe(2054);
    expect((await newest()).request.body).toMatchObject({ text: 'Fine.' });
  });
});
