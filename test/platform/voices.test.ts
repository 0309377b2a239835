import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { toneWav } from '../helpers/transcode.js';
import { api, upload } from './tts-helpers.js';

const { emu, ctl } = emulatorForFile();
const REF_URL = 'https://cdn.emulator.test/audio/ref-5s.wav';

const client = (key: string) => api(emu.platformUrl, key);
const save = (key: string, json: unknown, headers: Record<string, string> = {}) => client(key)('/v1/voice/save', { json, headers });
const list = (key: string, query = '') => client(key)(`/v1/voice/list${query}`);
const fails = (code: number, message?: RegExp) => ({
  error_code: code,
  succeed: false,
  data: null,
  ...(message ? { error_message: expect.stringMatching(message) } : {}),
});

describe('two-step cloning flow', () => {
  it('upload with scene audio, save with the object_key, list, synthesize, delete', async () => {
    const key = 'clone-a';
    const ref = toneWav(3);
    const up = await upload(emu.platformUrl, key, ref, { name: 'my ref.wav' });
    expect(up.body).toMatchObject({ error_code: 0, error_message: 'success', succeed: true });
    const objectKey = up.body.data.object_key as string;

    const t0 = Math.floor(emu.emulator.clock.now() / 1000);
    const saved = await save(key, { voice_id: 'my-voice_1', ref_audio: objectKey, ref_text: 'This is my voice.' });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ error_code: 0, error_message: 'success', succeed: true, data: {} });

    const listed = await list(key);
    expect(listed.body).toMatchObject({ error_code: 0, error_message: 'success', succeed: true });
    expect(listed.body.data).toMatchObject({ total: 1, has_more: false, next_voice_id: '' });
    const item = listed.body.data.list[0];
    expect(item.voice_id).toBe('my-voice_1');
    expect(item.created_at).toBeGreaterThanOrEqual(t0);
    expect(item.created_at).toBeLessThanOrEqual(Math.floor(emu.emulator.clock.now() / 1000));
    // voice_url is a signed link to the stored reference audio, fetchable without credentials.
    const dl = await fetch(item.voice_url);
    expect(dl.status).toBe(200);
    expect(Buffer.from(await dl.arrayBuffer()).equals(ref)).toBe(true);

    // The custom voice synthesizes; without language it speaks zh.
    const tts = await client(key)('/v1/text-to-speech', { json: { voice_id: 'my-voice_1', generate_text: 'Hi there.', audio_format: 'pcm' } });
    expect(tts.status).toBe(200);
    const sys = await client(key)('/v1/text-to-speech', { json: { voice_id: 'male_calm', generate_text: 'Hi there.', audio_format: 'pcm' } });
    expect(tts.bytes.equals(sys.bytes)).toBe(false);
    const records = emu.emulator.signatures.save().filter((r) => r.speakers[0]!.voices[0] === 'my-voice_1');
    expect(records.map((r) => r.language)).toEqual(['zh']);
    // Another account cannot use it.
    expect((await client('clone-b')('/v1/text-to-speech', { json: { voice_id: 'my-voice_1', generate_text: 'Hi.' } })).status).toBe(400);

    const del = await client(key)('/v1/voice/my-voice_1', { method: 'DELETE' });
    expect(del.body).toEqual({ error_code: 0, error_message: 'success', succeed: true, data: {} });
    const again = await client(key)('/v1/voice/my-voice_1', { method: 'DELETE' });
    expect(again.body.succeed).toBe(true);
    const gone = await client(key)('/v1/text-to-speech', { json: { voice_id: 'my-voice_1', generate_text: 'Hi there.' } });
    expect(gone.status).toBe(400);
    expect(gone.body.error_message).toMatch(/voice_id/);
    expect((await list(key)).body.data).toEqual({ list: [], total: 0, next_voice_id: '', has_more: false });
  });

  it('refuses an object_key uploaded with another key', async () => {
    const up = await upload(emu.platformUrl, 'owner-key', toneWav(2));
    const r = await save('thief-key', { voice_id: 'stolen', ref_audio: up.body.data.object_key, ref_text: 'hello' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(fails(20012, /ref_audio: object_key was not uploaded with this API key/));
    expect((await list('thief-key')).body.data.total).toBe(0);
  });
});

describe('reference audio', () => {
  const cases: [string, string, number, RegExp][] = [
    ['a public fixture URL longer than 30 s', 'https://cdn.emulator.test/audio/ref-40s.wav', 20015, /longer than 30 s/],
    ['a damaged file', 'https://cdn.emulator.test/audio/broken.mp3', 20012, /unsupported or file damaged/],
    ['a URL that cannot be downloaded', 'https://example.com/voice.wav', 20012, /could not be downloaded/],
    ['a loopback URL', 'http://127.0.0.1:9/voice.wav', 10001, /public address/],
    ['localhost', 'http://localhost/voice.wav', 10001, /public address/],
    ['a private address', 'https://192.168.1.20/voice.wav', 10001, /public address/],
    ['a non-http URL', 'ftp://cdn.emulator.test/audio/ref-5s.wav', 10001, /http or https/],
    ['neither URL nor object key', 'my-recording.wav', 10001, /public http\(s\) URL or an object_key/],
  ];
  it.each(cases)('%s → %i', async (_name, ref, code, message) => {
    const r = await save('ref-key', { voice_id: 'v', ref_audio: ref, ref_text: 'hello' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(fails(code, message));
  });

  it('a public fixture URL is accepted', async () => {
    expect((await save('ref-ok-key', { voice_id: 'from-url', ref_audio: REF_URL, ref_text: 'hello' })).body.succeed).toBe(true);
  });

  it('uploaded bytes that are not audio → 20012', async () => {
    const up = await upload(emu.platformUrl, 'ref-junk-key', Buffer.from('definitely not audio '.repeat(50)), { name: 'a.wav' });
    const r = await save('ref-junk-key', { voice_id: 'junk', ref_audio: up.body.data.object_key, ref_text: 'hello' });
    expect(r.body).toMatchObject(fails(20012));
  });
});

describe('save rules', () => {
  const cases: [string, unknown, number, RegExp][] = [
    ['uppercase voice_id', { voice_id: 'MyVoice', ref_audio: REF_URL, ref_text: 'a' }, 10001, /^voice_id: "MyVoice" must be 1 to 64 lowercase/],
    ['65-character voice_id', { voice_id: 'a'.repeat(65), ref_audio: REF_URL, ref_text: 'a' }, 10001, /^voice_id:/],
    ['voice_id with a space', { voice_id: 'my voice', ref_audio: REF_URL, ref_text: 'a' }, 10001, /^voice_id:/],
    ['missing voice_id', { ref_audio: REF_URL, ref_text: 'a' }, 10001, /^voice_id: is required/],
    ['ref_audio without ref_text', { voice_id: 'v', ref_audio: REF_URL }, 10001, /given together \(ref_text is missing\)/],
    ['ref_text without ref_audio', { voice_id: 'v', ref_text: 'hello' }, 10001, /given together \(ref_audio is missing\)/],
    ['neither', { voice_id: 'v' }, 10001, /both are required/],
    ['ref_text of 501 characters', { voice_id: 'v', ref_audio: REF_URL, ref_text: '好'.repeat(501) }, 10001, /^ref_text: 501 characters, more than 500/],
    ['a platform preset name', { voice_id: 'female_warm', ref_audio: REF_URL, ref_text: 'a' }, 10018, /system preset/],
    ['a speech catalogue preset name', { voice_id: 'presenter_male', ref_audio: REF_URL, ref_text: 'a' }, 10018, /system preset/],
    ['a preset name in other case', { voice_id: 'wise_woman', ref_audio: REF_URL, ref_text: 'a' }, 10018, /system preset/],
  ];
  it.each(cases)('%s → %i', async (_name, json, code, message) => {
    const r = await save('rules-key', json);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(fails(code, message));
  });

  it('ref_text of exactly 500 characters and a 64-character id are accepted', async () => {
    expect((await save('rules-ok-key', { voice_id: `a-${'b'.repeat(62)}`, ref_audio: REF_URL, ref_text: '好'.repeat(500) })).body.succeed).toBe(true);
  });

  it('at 5 custom voices a new name is 10017, an overwrite is not; overwrite re-creates', async () => {
    const key = 'limit-key';
    for (const id of ['v1', 'v2', 'v3', 'v4', 'v5']) expect((await save(key, { voice_id: id, ref_audio: REF_URL, ref_text: 'a' })).body.succeed).toBe(true);
    expect((await save(key, { voice_id: 'v6', ref_audio: REF_URL, ref_text: 'a' })).body).toMatchObject(fails(10017, /limit/));
    const before = (await list(key)).body.data.list.find((v: any) => v.voice_id === 'v3').created_at;
    await ctl.advance(10_000);
    expect((await save(key, { voice_id: 'v3', ref_audio: REF_URL, ref_text: 'again' })).body.succeed).toBe(true);
    const after = (await list(key)).body.data.list.find((v: any) => v.voice_id === 'v3').created_at;
    expect(after).toBeGreaterThanOrEqual(before + 10);
    await client(key)('/v1/voice/v1', { method: 'DELETE' });
    expect((await save(key, { voice_id: 'v6', ref_audio: REF_URL, ref_text: 'a' })).body.succeed).toBe(true);
  });

  it('20 parallel saves of new names: exactly 5 succeed, the rest are 10017, and the list holds 5', async () => {
    const key = 'race-key';
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => save(key, { voice_id: `race-${i}`, ref_audio: REF_URL, ref_text: 'a' })));
    expect(answers.filter((r) => r.body.succeed)).toHaveLength(5);
    for (const r of answers.filter((a) => !a.body.succeed)) expect(r.body).toMatchObject(fails(10017, /limit/));
    expect((await list(key)).body.data.list).toHaveLength(5);
  });

  it('10019 and 10000 are reachable by fault, with HTTP 200', async () => {
    for (const code of [10019, 10000, 10014]) {
      const r = await save('fault-key', { voice_id: 'v', ref_audio: REF_URL, ref_text: 'a' }, { 'x-emulator-fault': `code=${code}` });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject(fails(code));
    }
  });

  it('no key or no cloning capability → 10003; an exhausted balance → 20003; always HTTP 200', async () => {
    for (const [key, path, method] of [
      ['', '/v1/voice/list', 'GET'],
      ['emulator-tts-only-key', '/v1/voice/list', 'GET'],
      ['emulator-tts-only-key', '/v1/voice/x', 'DELETE'],
    ] as const) {
      const r = await client(key)(path, { method });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject(fails(10003));
    }
    const noCap = await save('emulator-tts-only-key', { voice_id: 'v', ref_audio: REF_URL, ref_text: 'a' });
    expect(noCap.body).toMatchObject(fails(10003, /cloning/));
    const broke = await save('emulator-broke-key', { voice_id: 'v', ref_audio: REF_URL, ref_text: 'a' });
    expect(broke.status).toBe(200);
    expect(broke.body).toMatchObject(fails(20003));
  });
});

describe('list and delete', () => {
  it('pages by cursor to the end, in a stable order, without duplicates', async () => {
    const key = 'paging-key';
    for (const id of ['echo', 'alpha', 'delta', 'charlie', 'bravo']) await save(key, { voice_id: id, ref_audio: REF_URL, ref_text: 'a' });
    const seen: string[] = [];
    let cursor = '';
    const pages: any[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await list(key, `?page_size=2${cursor ? `&voice_id=${cursor}` : ''}`);
      pages.push(r.body.data);
      seen.push(...r.body.data.list.map((v: any) => v.voice_id));
      expect(r.body.data.total).toBe(r.body.data.list.length);
      if (!r.body.data.has_more) break;
      cursor = r.body.data.next_voice_id;
    }
    expect(seen).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(pages.map((p) => [p.total, p.has_more, p.next_voice_id])).toEqual([
      [2, true, 'charlie'],
      [2, true, 'echo'],
      [1, false, ''],
    ]);
    const whole = await list(key);
    expect(whole.body.data.total).toBe(5);
    expect((await list(key, '?page_size=20')).body.data.has_more).toBe(false);
  });

  it('page_size above 20, zero or not a number → 10001', async () => {
    for (const q of ['?page_size=21', '?page_size=0', '?page_size=ten']) {
      const r = await list('paging-key', q);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject(fails(10001, /^page_size:/));
    }
  });

  it('deleting a system voice succeeds and removes nothing', async () => {
    const r = await client('sys-key')('/v1/voice/female_warm', { method: 'DELETE' });
    expect(r.body).toEqual({ error_code: 0, error_message: 'success', succeed: true, data: {} });
    expect((await client('sys-key')('/v1/text-to-speech', { json: { voice_id: 'female_warm', generate_text: 'still here' } })).status).toBe(200);
  });

  it('a reset of the account drops its voices', async () => {
    await save('reset-key', { voice_id: 'temp', ref_audio: REF_URL, ref_text: 'a' });
    expect((await list('reset-key')).body.data.total).toBe(1);
    await ctl.reset('reset-key');
    expect((await list('reset-key')).body.data.total).toBe(0);
  });

  it('created_at is Unix seconds of the emulator clock', async () => {
    await ctl.setClock({ freeze: true, set_ms: 1_900_000_000_500 });
    await save('clock-key', { voice_id: 'timed', ref_audio: REF_URL, ref_text: 'a' });
    expect((await list('clock-key')).body.data.list[0].created_at).toBe(1_900_000_000);
    await ctl.freeze(false);
  });
});
