import { describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../../helpers/emulator.js';
import { codeOf, msgOf, PANGRAM, resourcesOf, speechApi, zipOf } from '../beyond.js';
import { madeTask as madeTaskOf, untar } from './async-helpers.js';
import { ffprobe } from '../../helpers/ffprobe.js';

/** Async synthesis: `t2a_async_v2`, the task query, the tar output (section 6, rule 12.12). */
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });
const HOUR = 3600 * 1000;
const VOICE = { voice_id: 'female-shaonv' };

/** The state-view record of a task once its audio is made (real work; the clock stays frozen). */
const madeTask = (taskId: number) => madeTaskOf(emu.speechUrl, taskId);

const now = async () => (await ctl.clock()).body.now_ms as number;

describe('async synthesis', () => {
  it('Processing until 1,000 ms + audio length / 10 on the clock, then Success with a tar of audio, titles and extra; Expired 9 h later', async () => {
    const api = speechApi(emu.speechUrl, 'async-main');
    const text = 'First sentence here. And a second one, a little longer. Third.';
    const c = await api.post('/v1/t2a_async_v2', {
      model: 'speech-02-hd',
      text,
      voice_setting: VOICE,
      audio_setting: { audio_sample_rate: 24000, format: 'mp3', channel: 1 },
    });
    expect([c.status, codeOf(c)]).toEqual([200, 0]);
    expect(Object.keys(c.body).sort()).toEqual(['base_resp', 'file_id', 'task_id', 'task_token', 'trace_id', 'usage_characters']);
    expect(Number.isSafeInteger(c.body.task_id) && Number.isSafeInteger(c.body.file_id)).toBe(true);
    expect(c.body.usage_characters).toBeGreaterThan(0);
    const q = () => api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`);
    expect((await q()).body).toMatchObject({ task_id: c.body.task_id, status: 'Processing', file_id: c.body.file_id });

    const task = await madeTask(c.body.task_id);
    expect((await q()).body.status).toBe('Processing'); // the audio exists, the clock has not moved
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${c.body.file_id}`))).toBe(2013);
    await ctl.advance(task.ready_at_ms - (await now()) - 1);
    expect((await q()).body.status).toBe('Processing');
    await ctl.advance(1);
    expect((await q()).body.status).toBe('Success');

    const r = await api.get(`/v1/files/retrieve?file_id=${c.body.file_id}`);
    expect(r.body.file).toMatchObject({ file_id: c.body.file_id, filename: `${c.body.file_id}.tar`, purpose: 't2a_async' });
    const url = new URL(r.body.file.download_url);
    expect(Number(url.searchParams.get('expires'))).toBe(task.ready_at_ms + 9 * HOUR);
    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${c.body.file_id}`);
    expect(content.headers.get('content-type')).toBe('application/x-tar');
    expect(content.bytes.length).toBe(r.body.file.bytes);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(content.bytes)).toBe(true);

    const files = untar(content.bytes);
    const base = `${c.body.task_id}/content-${c.body.task_id}`;
    expect([...files.keys()]).toEqual([`${base}.mp3`, `${base}.titles`, `${base}.extra`]);
    const audio = files.get(`${base}.mp3`)!;
    const extra = JSON.parse(files.get(`${base}.extra`)!.toString());
    const p = await ffprobe(audio, { ext: 'mp3' });
    expect(p).toMatchObject({ codec: 'mp3', sampleRate: 24000, channels: 1 });
    expect(extra).toEqual({ audio_length: expect.any(Number), audio_sample_rate: 24000, audio_size: audio.length, bitrate: 128000, word_count: 11 });
    expect(Math.abs(extra.audio_length - p.durationMs)).toBeLessThanOrEqual(30);
    expect(task.ready_at_ms - task.created_at_ms).toBe(1000 + Math.round(extra.audio_length / 10));
    const titles = JSON.parse(files.get(`${base}.titles`)!.toString());
    expect(titles.map((t: any) => t.text.trim()).join(' ')).toBe(text);
    for (const t of titles) expect(t.time_end).toBeGreaterThan(t.time_begin);
    expect(titles.at(-1).time_end).toBeLessThanOrEqual(extra.audio_length);
    expect((await api.get('/v1/files/list?purpose=t2a_async')).body.files.map((f: any) => f.file_id)).toEqual([c.body.file_id]);

    await ctl.advance(9 * HOUR);
    expect((await q()).body.status).toBe('Expired');
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${c.body.file_id}`))).toBe(2013);
    expect((await fetch(url)).status).toBe(404); // the file is gone
    expect((await api.get('/v1/files/list?purpose=t2a_async')).body.files).toEqual([]);
  });

  it('text_file_id reads an uploaded txt input', async () => {
    const api = speechApi(emu.speechUrl, 'async-file');
    const input = await api.upload('t2a_async_input', Buffer.from('Read from a file. It works.'), 'input.txt');
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: input.body.file.file_id, voice_setting: VOICE });
    expect(codeOf(c)).toBe(0);
    const task = await madeTask(c.body.task_id);
    await ctl.advance(task.ready_at_ms - (await now()));
    expect((await api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`)).body.status).toBe('Success');
    const files = untar((await api.getBytes(`/v1/files/retrieve_content?file_id=${c.body.file_id}`)).bytes);
    const titles = JSON.parse([...files].find(([n]) => n.endsWith('.titles'))![1].toString());
    expect(titles.map((t: any) => t.text.trim()).join(' ')).toBe('Read from a file. It works.');
  });

  it('a zip input: one folder per file; json files give their title, content and extra', async () => {
    const api = speechApi(emu.speechUrl, 'async-zip');
    const txtZip = await api.upload('t2a_async_input', zipOf({ 'one.txt': 'First file.', 'two.txt': 'Second file.' }), 'in.zip');
    const jsonZip = await api.upload(
      't2a_async_input',
      zipOf({ 'book.json': JSON.stringify({ title: 'A title.', content: 'The content.', extra: '' }) }),
      'in.zip',
    );
    const run = async (fileId: number) => {
      const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: fileId, voice_setting: VOICE });
      expect(codeOf(c), c.text).toBe(0);
      const task = await madeTask(c.body.task_id);
      await ctl.advance(Math.max(0, task.ready_at_ms - (await now())));
      return { c, files: untar((await api.getBytes(`/v1/files/retrieve_content?file_id=${c.body.file_id}`)).bytes) };
    };
    const a = await run(txtZip.body.file.file_id);
    const id = a.c.body.task_id;
    expect([...a.files.keys()]).toEqual(['one', 'two'].flatMap((f) => ['mp3', 'titles', 'extra'].map((x) => `${id}/${f}/content-${id}.${x}`)));
    expect(JSON.parse(a.files.get(`${id}/two/content-${id}.titles`)!.toString())[0].text).toBe('Second file.');
    const b = await run(jsonZip.body.file.file_id);
    const jid = b.c.body.task_id;
    expect([...b.files.keys()].filter((n) => n.endsWith('.titles'))).toEqual([`${jid}/book/title-${jid}.titles`, `${jid}/book/content-${jid}.titles`]);
    expect(JSON.parse(b.files.get(`${jid}/book/title-${jid}.titles`)!.toString())[0].text).toBe('A title.');

    const mixed = await api.upload('t2a_async_input', zipOf({ 'a.txt': 'x.', 'b.json': '{}' }), 'in.zip');
    const r = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: mixed.body.file.file_id, voice_setting: VOICE });
    expect([codeOf(r), msgOf(r)]).toEqual([
      2013,
      `invalid params, text_file_id ${mixed.body.file.file_id}: the zip must hold files of one type, all .txt or all .json`,
    ]);
    const badJson = await api.upload('t2a_async_input', zipOf({ 'b.json': '{"title": 3}' }), 'in.zip');
    const r2 = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: badJson.body.file.file_id, voice_setting: VOICE });
    expect(msgOf(r2)).toContain('b.json has no non-empty title, content or extra string');
  });

  it('a clock advance past a task ready time is answered once its audio is made: a query right after it reads Success', async () => {
    const api = speechApi(emu.speechUrl, 'async-advance');
    for (let i = 0; i < 3; i++) {
      const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: `${PANGRAM} Round ${i}.`, voice_setting: VOICE });
      expect(codeOf(c), c.text).toBe(0);
      expect((await ctl.advance(60_000)).status).toBe(200);
      // no waiting here: the advance itself waited for the audio it made due
      const items = await resourcesOf(emu.speechUrl, 'speech-async', (ts) => ts.some((t) => t.task_id === c.body.task_id && t.status !== 'Processing'));
      expect(items.find((t) => t.task_id === c.body.task_id)).toMatchObject({ status: 'Success', audio_ready: true });
      expect((await api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`)).body.status).toBe('Success');
    }
  });

  it('a query that finds a task due while its audio is still being made waits for it (no advance through the control plane)', async () => {
    const api = speechApi(emu.speechUrl, 'async-due');
    await ctl.advance(0);
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: `${PANGRAM} ${PANGRAM}`, voice_setting: VOICE });
    expect(codeOf(c), c.text).toBe(0);
    // the clock moved by the emulator itself: set straight on the instance, as a timer-driven move would
    emu.emulator.clock.advance(3_600_000);
    expect((await api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`)).body.status).toBe('Success');
  });

  it('zip entry names stay inside the task folder: `..` segments resolve within it, a name that climbs out is 2013', async () => {
    const api = speechApi(emu.speechUrl, 'async-slip');
    const inside = await api.upload('t2a_async_input', zipOf({ 'x/../y/./z.txt': 'Inside.' }), 'in.zip');
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: inside.body.file.file_id, voice_setting: VOICE });
    expect(codeOf(c), c.text).toBe(0);
    const task = await madeTask(c.body.task_id);
    await ctl.advance(Math.max(0, task.ready_at_ms - (await now())));
    const id = c.body.task_id;
    const names = [...untar((await api.getBytes(`/v1/files/retrieve_content?file_id=${c.body.file_id}`)).bytes).keys()];
    expect(names).toEqual(['mp3', 'titles', 'extra'].map((x) => `${id}/y/z/content-${id}.${x}`));

    for (const name of ['x/../../../escaped.txt', '../up.txt', 'a\\..\\..\\b.txt']) {
      const out = await api.upload('t2a_async_input', zipOf({ [name]: 'Out.' }), 'in.zip');
      const r = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: out.body.file.file_id, voice_setting: VOICE });
      expect([codeOf(r), msgOf(r)], name).toEqual([
        2013,
        `invalid params, text_file_id ${out.body.file.file_id}: the zip entry name ${JSON.stringify(name)} leaves its folder ("..")`,
      ]);
    }
  });

  it('a cut_after_chunks fault on the request makes the task Failed', async () => {
    const api = speechApi(emu.speechUrl, 'async-fail');
    const c = await api.post(
      '/v1/t2a_async_v2',
      { model: 'speech-02-hd', text: 'Doomed.', voice_setting: VOICE },
      { 'X-Emulator-Fault': 'cut_after_chunks=0' },
    );
    expect(codeOf(c)).toBe(0);
    await ctl.advance(60_000);
    expect((await api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`)).body.status).toBe('Failed');
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${c.body.file_id}`))).toBe(2013);
  });

  it('a cloned voice speaks in an async task and is then listed', async () => {
    const api = speechApi(emu.speechUrl, 'async-clone');
    expect(codeOf(await api.clone('AsyncClone01'))).toBe(0);
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'My own voice.', voice_setting: { voice_id: 'AsyncClone01' } });
    expect(codeOf(c)).toBe(0);
    await madeTask(c.body.task_id);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning.map((v: any) => v.voice_id)).toEqual(['AsyncClone01']);
    const other = speechApi(emu.speechUrl, 'async-clone-other');
    expect(codeOf(await other.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Not mine.', voice_setting: { voice_id: 'AsyncClone01' } }))).toBe(2042);
  });

  it('more than 10 queries a second by one account is 1002; an unknown or foreign task_id is 2013', async () => {
    const api = speechApi(emu.speechUrl, 'async-rate');
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Rate.', voice_setting: VOICE });
    const q = () => api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`);
    for (let i = 0; i < 10; i++) expect(codeOf(await q())).toBe(0);
    const limited = await q();
    expect([limited.status, codeOf(limited)]).toEqual([200, 1002]);
    await ctl.advance(1000);
    expect(codeOf(await q())).toBe(0);
    const other = speechApi(emu.speechUrl, 'async-rate-other');
    const foreign = await other.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`);
    expect([codeOf(foreign), msgOf(foreign)]).toEqual([2013, `invalid params, task_id ${c.body.task_id} is not a task of this account`]);
    expect(msgOf(await other.get('/v1/query/t2a_async_query_v2'))).toBe('invalid params, task_id is required');
  });

  it('bad input is 2013 naming the field and the rule', async () => {
    const api = speechApi(emu.speechUrl, 'async-bad');
    const notText = await api.upload('voice_clone', await api.audio('Hi.'));
    const cases: [Record<string, unknown>, string][] = [
      [{ voice_setting: VOICE }, 'text or text_file_id is required'],
      [{ text: 'a', text_file_id: 1, voice_setting: VOICE }, 'give either text or text_file_id, not both'],
      [
        { text: 'a'.repeat(50_001), voice_setting: VOICE },
        'text must be at most 50000 characters (got 50001); upload longer texts as a file and send text_file_id',
      ],
      [{ text_file_id: 77, voice_setting: VOICE }, 'text_file_id 77 is not a file of this account (unknown, deleted, expired or not ready yet)'],
      [
        { text_file_id: notText.body.file.file_id, voice_setting: VOICE },
        `text_file_id ${notText.body.file.file_id} was uploaded with purpose voice_clone, not t2a_async_input`,
      ],
      [{ text: 'a' }, 'voice_setting is required'],
      [
        { text: 'a', voice_setting: VOICE, audio_setting: { audio_sample_rate: 12345 } },
        'audio_setting.audio_sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100',
      ],
      [{ text: 'a', voice_setting: VOICE, audio_setting: { channel: 3 } }, 'audio_setting.channel must be 1 or 2'],
    ];
    for (const [body, msg] of cases) {
      const r = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', ...body });
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, `invalid params, ${msg}`]);
    }
    const noModel = await api.post('/v1/t2a_async_v2', { text: 'a', voice_setting: VOICE });
    expect(msgOf(noModel)).toBe('invalid params, model is required');
    // The T2A rules apply to the shared fields.
    const badVoice = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'a', voice_setting: { voice_id: 'no-such-voice' } });
    expect(codeOf(badVoice)).toBe(2054);
    const badSpeed = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'a', voice_setting: { ...VOICE, speed: 9 } });
    expect([codeOf(badSpeed), msgOf(badSpeed)]).toEqual([2013, expect.stringContaining('voice_setting.speed')]);
  });

  it('a text of 50,000 characters is accepted (five times the T2A limit), one more is not', async () => {
    const api = speechApi(emu.speechUrl, 'async-long');
    const text = PANGRAM.repeat(1200).slice(0, 50_000);
    // The fault cuts the synthesis: the request is checked and billed, no hour of audio is made.
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-turbo', text, voice_setting: VOICE }, { 'X-Emulator-Fault': 'cut_after_chunks=0' });
    expect(codeOf(c)).toBe(0);
    expect(c.body.usage_characters).toBeGreaterThan(10_000);
    expect(codeOf(await api.post('/v1/t2a_async_v2', { model: 'speech-02-turbo', text: `${text}x`, voice_setting: VOICE }))).toBe(2013);
  });
});
