import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';

/** `POST /v1/get_voice` (rule 12.8). */
const { emu } = emulatorForFile({ plane: 'speech' });
const CLIENT_DEFAULTS = [
  'Calm_Woman',
  'Wise_Woman',
  'Friendly_Person',
  'Deep_Voice_Man',
  'Lively_Girl',
  'socialmedia_female_2_v1',
  'English_expressive_narrator',
  'audiobook_male_1',
];

describe('get_voice', () => {
  it('system: only the system_voice key, items with voice_id, voice_name, description[] and created_time, the client defaults included', async () => {
    const r = await speechApi(emu.speechUrl).post('/v1/get_voice', { voice_type: 'system' });
    expect(r.status).toBe(200);
    expect(codeOf(r)).toBe(0);
    expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
    expect(Object.keys(r.body).sort()).toEqual(['base_resp', 'system_voice', 'trace_id']);
    for (const v of r.body.system_voice) {
      expect(Object.keys(v).sort()).toEqual(['created_time', 'description', 'voice_id', 'voice_name']);
      expect(typeof v.voice_name).toBe('string');
      expect(v.description.length).toBe(1);
      expect(typeof v.description[0]).toBe('string');
    }
    const ids = r.body.system_voice.map((v: any) => v.voice_id);
    for (const id of CLIENT_DEFAULTS) expect(ids).toContain(id);
  });

  it('voice_cloning and voice_generation: only the asked key, an empty array for a new account; all: the three keys', async () => {
    const api = speechApi(emu.speechUrl, 'get-voice-empty');
    const c = await api.post('/v1/get_voice', { voice_type: 'voice_cloning' });
    expect(c.body.voice_cloning).toEqual([]);
    expect(c.body.system_voice).toBeUndefined();
    expect(c.body.voice_generation).toBeUndefined();
    const g = await api.post('/v1/get_voice', { voice_type: 'voice_generation' });
    expect(g.body.voice_generation).toEqual([]);
    expect(g.body.voice_cloning).toBeUndefined();
    const all = await api.post('/v1/get_voice', { voice_type: 'all' });
    expect(Object.keys(all.body).sort()).toEqual(['base_resp', 'system_voice', 'trace_id', 'voice_cloning', 'voice_generation']);
  });

  it('is served by the backup listener from the same state', async () => {
    const r = await speechApi(emu.speechBackupUrl).post('/v1/get_voice', { voice_type: 'system' });
    expect(codeOf(r)).toBe(0);
    expect(r.body.system_voice.length).toBeGreaterThan(0);
  });

  it('bad input: 2013 naming voice_type and the accepted values; HTTP 200', async () => {
    const api = speechApi(emu.speechUrl);
    const missing = await api.post('/v1/get_voice', {});
    expect([missing.status, codeOf(missing), msgOf(missing)]).toEqual([200, 2013, 'invalid params, voice_type is required']);
    const bad = await api.post('/v1/get_voice', { voice_type: 'mine' });
    expect(codeOf(bad)).toBe(2013);
    expect(msgOf(bad)).toContain('voice_type must be one of system, voice_cloning, voice_generation, all');
    const notJson = await api.raw('/v1/get_voice', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect([notJson.status, codeOf(notJson)]).toEqual([200, 2013]);
    const array = await api.post('/v1/get_voice', ['system']);
    expect(msgOf(array)).toBe('invalid params, request body must be a JSON object');
  });

  it('admission first: no key is 1004 even with a broken body; a fault header answers its code', async () => {
    const noKey = await speechApi(emu.speechUrl, null).raw('/v1/get_voice', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect([noKey.status, codeOf(noKey)]).toEqual([200, 1004]);
    const fault = await speechApi(emu.speechUrl).post('/v1/get_voice', { voice_type: 'system' }, { 'X-Emulator-Fault': 'code=1002' });
    expect(codeOf(fault)).toBe(1002);
  });
});
