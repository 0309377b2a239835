import { run } from '../helpers/tools.js';
import { mkdtempSync, openAsBlob, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { codeOf, msgOf, PANGRAM, speechApi } from './beyond.js';

/** The file API as the official CLI uses it (rule E18): `retrieval`, video purposes, list and delete without purpose. */
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });
const DAY = 24 * 3600 * 1000;

/** Small real media files made by ffmpeg: mp4, mov, avi, mkv, png, jpg, webp. */
const media: Record<string, Buffer> = {};
const dir = mkdtempSync(join(tmpdir(), 'speech-files-media-'));
beforeAll(async () => {
  const color = ['-f', 'lavfi', '-i', 'color=c=blue:s=32x32:d=0.2'];
  for (const ext of ['mp4', 'mov', 'avi', 'mkv']) {
    await run('ffmpeg', ['-v', 'error', '-y', ...color, '-c:v', 'mpeg4', join(dir, `x.${ext}`)]);
    media[ext] = readFileSync(join(dir, `x.${ext}`));
  }
  for (const ext of ['png', 'jpg', 'webp']) {
    await run('ffmpeg', ['-v', 'error', '-y', ...color, '-frames:v', '1', join(dir, `x.${ext}`)]);
    media[ext] = readFileSync(join(dir, `x.${ext}`));
  }
  // A HEIF header (ffmpeg here cannot write HEIC): the ftyp box with brand heic.
  media.heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), Buffer.alloc(64, 1)]);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A file of `size` bytes that starts with `head` (zeros after it, a sparse file), streamed from disk when uploaded as
 * a large file is by a real client: nothing of it is built in memory, so the test process never blocks for seconds.
 */
let sized = 0;
function fileOf(head: Buffer, size: number): Promise<Blob> {
  const path = join(dir, `sized-${sized++}.bin`);
  writeFileSync(path, head);
  truncateSync(path, size);
  return openAsBlob(path);
}

describe('files as the official CLI uses them', () => {
  it('retrieval: stored as it came; list, retrieve, retrieve_content and delete work', async () => {
    const api = speechApi(emu.speechUrl, 'cli-retrieval');
    const bytes = Buffer.from('%PDF-1.4 not checked at all \0\x01\x02', 'latin1');
    const up = await api.upload('retrieval', bytes, 'notes.pdf');
    expect([up.status, codeOf(up)]).toEqual([200, 0]);
    const file = up.body.file;
    expect(file).toMatchObject({ purpose: 'retrieval', bytes: bytes.length, filename: 'notes.pdf' });
    expect((await api.get('/v1/files/list?purpose=retrieval')).body.files).toEqual([file]);
    const ret = await api.get(`/v1/files/retrieve?file_id=${file.file_id}`);
    expect(ret.body.file).toMatchObject(file);
    expect(Buffer.from(await (await fetch(ret.body.file.download_url)).arrayBuffer()).equals(bytes)).toBe(true);
    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${file.file_id}`);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.bytes.equals(bytes)).toBe(true);
    const del = await api.post('/v1/files/delete', { file_id: String(file.file_id) });
    expect([codeOf(del), del.body.file_id]).toEqual([0, file.file_id]);
    expect((await api.get('/v1/files/list')).body.files).toEqual([]);
  });

  it('retrieval files are refused by cloning and async synthesis with 2013 naming the field', async () => {
    const api = speechApi(emu.speechUrl, 'cli-retrieval-use');
    const audio = await api.audio(PANGRAM.repeat(4));
    const id = await api.uploadAudio('retrieval', audio, 'sample.wav');
    const clone = await api.post('/v1/voice_clone', { file_id: id, voice_id: 'RetrievalVoice1' });
    expect([clone.status, codeOf(clone), msgOf(clone)]).toEqual([
      200,
      2013,
      `invalid params, file_id ${id} was uploaded with purpose retrieval, which synthesis and voice cloning do not accept`,
    ]);
    const prompt = await api.post('/v1/voice_clone', {
      file_id: await api.uploadAudio('voice_clone', audio),
      voice_id: 'RetrievalVoice2',
      clone_prompt: { prompt_audio: id, prompt_text: 'The quick brown fox.' },
    });
    expect([codeOf(prompt), msgOf(prompt)]).toEqual([2013, expect.stringContaining(`clone_prompt.prompt_audio ${id} was uploaded with purpose retrieval`)]);
    const text = await api.uploadAudio('retrieval', Buffer.from('Plain words to read.'), 'in.txt');
    const task = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: text, voice_setting: { voice_id: 'female-shaonv' } });
    expect([codeOf(task), msgOf(task)]).toEqual([
      2013,
      `invalid params, text_file_id ${text} was uploaded with purpose retrieval, which synthesis and voice cloning do not accept`,
    ]);
  });

  it('video_understanding takes mp4, avi, mov and mkv; anything else is HTTP 400 2013 and not kept', async () => {
    const api = speechApi(emu.speechUrl, 'cli-video-u');
    for (const ext of ['mp4', 'avi', 'mov', 'mkv']) {
      const r = await api.upload('video_understanding', media[ext], `clip.${ext}`);
      expect([ext, r.status, codeOf(r)]).toEqual([ext, 200, 0]);
    }
    for (const bad of [media.png!, await api.audio('Not a video.'), Buffer.from('text')]) {
      const r = await api.upload('video_understanding', bad, 'clip.mp4');
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([
        400,
        2013,
        'invalid params, file content is not a video; purpose video_understanding accepts mp4, avi, mov or mkv',
      ]);
    }
    const empty = await api.upload('video_understanding', Buffer.alloc(0), 'clip.mp4');
    expect([empty.status, msgOf(empty)]).toEqual([400, 'invalid params, file is empty']);
    // video_understanding is not a documented list purpose; the list without purpose shows the four.
    expect(codeOf(await api.get('/v1/files/list?purpose=video_understanding'))).toBe(2013);
    expect((await api.get('/v1/files/list')).body.files.map((f: any) => f.filename)).toEqual(['clip.mkv', 'clip.mov', 'clip.avi', 'clip.mp4']);
    const mp4 = (await api.get('/v1/files/list')).body.files.at(-1);
    expect((await api.getBytes(`/v1/files/retrieve_content?file_id=${mp4.file_id}`)).headers.get('content-type')).toBe('video/mp4');
  });

  it('video_generation_input: images, mp4/mov video and wav/mp3 audio within their sizes; others HTTP 400', async () => {
    const api = speechApi(emu.speechUrl, 'cli-video-g');
    const accepted: [string, Buffer][] = [
      ['png', media.png!],
      ['jpg', media.jpg!],
      ['webp', media.webp!],
      ['heic', media.heic!],
      ['mp4', media.mp4!],
      ['mov', media.mov!],
      ['wav', await api.audio('Sound.')],
      ['mp3', await api.audio('Sound.', { format: 'mp3', sampleRate: 32000 })],
    ];
    for (const [ext, bytes] of accepted) {
      const r = await api.upload('video_generation_input', bytes, `in.${ext}`);
      expect([ext, r.status, codeOf(r)]).toEqual([ext, 200, 0]);
    }
    const accepts =
      'purpose video_generation_input accepts images (jpg, jpeg, png, webp, heic, heif) up to 30 MB, video (mp4, mov) up to 50 MB or audio (wav, mp3) up to 15 MB';
    const refused: [Buffer | Blob, string][] = [
      [media.avi!, `invalid params, file content is a avi video; ${accepts}`],
      [media.mkv!, `invalid params, file content is a mkv video; ${accepts}`],
      [Buffer.from('just text'), `invalid params, file content is not a supported image, video or audio; ${accepts}`],
      [await fileOf(media.png!, media.png!.length + 30 * 1024 * 1024), `invalid params, file is an image larger than 30 MB; ${accepts}`],
      [await fileOf((await api.audio('Big.')).subarray(0, 44), 44 + 15 * 1024 * 1024), `invalid params, file is audio larger than 15 MB; ${accepts}`],
    ];
    for (const [bytes, msg] of refused) {
      const r = await api.upload('video_generation_input', bytes, 'in.bin');
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([400, 2013, msg]);
    }
    const listed = (await api.get('/v1/files/list?purpose=video_generation_input')).body.files;
    // Oldest first, ties of one second by id.
    expect(listed.map((f: any) => f.filename).sort()).toEqual(accepted.map(([ext]) => `in.${ext}`).sort());
  });

  it('over 50 MB, nothing is stored, the body is read to its end and each purpose answers its own size refusal', { timeout: 60_000 }, async () => {
    const api = speechApi(emu.speechUrl, 'cli-huge');
    const huge = (head: Buffer) => fileOf(head, 50 * 1024 * 1024 + 1);
    const cases: [string, Blob, number, string][] = [
      ['voice_clone', await huge(await api.audio('Big.')), 200, 'invalid params, file is larger than 20 MB, the upload limit'],
      ['retrieval', await huge(Buffer.from('x')), 200, 'invalid params, file is larger than 50 MB, the limit of purpose retrieval'],
      ['video_understanding', await huge(media.mp4!), 400, 'invalid params, file is larger than 50 MB, the limit of purpose video_understanding'],
      [
        'video_generation_input',
        await huge(media.mp4!),
        400,
        expect.stringMatching(/^invalid params, file is larger than 50 MB; purpose video_generation_input accepts/) as any,
      ],
    ];
    for (const [purpose, bytes, status, msg] of cases) {
      const r = await api.upload(purpose, bytes, 'big.bin');
      expect([purpose, r.status, codeOf(r), msgOf(r)]).toEqual([purpose, status, 2013, msg]);
    }
    expect((await api.get('/v1/files/list')).body.files).toEqual([]);
  });

  it('video uploads are gone 7 days after upload on the emulator clock; others stay', async () => {
    const api = speechApi(emu.speechUrl, 'cli-video-retention');
    const video = (await api.upload('video_understanding', media.mp4!, 'v.mp4')).body.file.file_id;
    const image = (await api.upload('video_generation_input', media.png!, 'i.png')).body.file.file_id;
    const kept = (await api.upload('retrieval', Buffer.from('kept'), 'k.txt')).body.file.file_id;
    const link = (await api.get(`/v1/files/retrieve?file_id=${video}`)).body.file.download_url;
    await control(emu.speechUrl).advance(7 * DAY - 1);
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${video}`))).toBe(0);
    // The link handed out a moment ago ends with the file, not 24 h later.
    const late = (await api.get(`/v1/files/retrieve?file_id=${image}`)).body.file.download_url;
    expect(Number(new URL(late).searchParams.get('expires'))).toBe((await control(emu.speechUrl).clock()).body.now_ms + 1);
    await control(emu.speechUrl).advance(1);
    for (const id of [video, image]) {
      const r = await api.get(`/v1/files/retrieve?file_id=${id}`);
      expect([codeOf(r), msgOf(r)]).toEqual([2013, `invalid params, file_id ${id} is not a file of this account (unknown, deleted, expired or not ready yet)`]);
    }
    expect((await fetch(link)).status).not.toBe(200);
    expect((await api.get('/v1/files/list')).body.files.map((f: any) => f.file_id)).toEqual([kept]);
  });

  it('list without purpose: every file of the account, newest first; a purpose outside the list is 2013', async () => {
    const api = speechApi(emu.speechUrl, 'cli-list');
    const a = await api.uploadAudio('voice_clone', await api.audio('One.'));
    await control(emu.speechUrl).advance(2000);
    const b = await api.uploadAudio('prompt_audio', await api.audio('Two.'));
    const c = await api.uploadAudio('retrieval', Buffer.from('three'));
    const d = await api.uploadAudio('t2a_async_input', Buffer.from('Four.'));
    const all = await api.get('/v1/files/list');
    expect(Object.keys(all.body).sort()).toEqual(['base_resp', 'files', 'trace_id']);
    expect(all.body.files.map((f: any) => f.file_id)).toEqual([d, c, b, a]);
    expect(Object.keys(all.body.files[0]).sort()).toEqual(['bytes', 'created_at', 'file_id', 'filename', 'purpose']);
    expect((await api.get('/v1/files/list?purpose=t2a_async')).body.files).toEqual([]);
    for (const p of ['vision', 'video_understanding', 'video_generation']) {
      const r = await api.get(`/v1/files/list?purpose=${p}`);
      expect([codeOf(r), msgOf(r)]).toEqual([
        2013,
        `invalid params, purpose "${p}" is not supported; use one of voice_clone, prompt_audio, t2a_async_input, video_generation_input, t2a_async, retrieval`,
      ]);
    }
    // Another account sees none of them.
    expect((await speechApi(emu.speechUrl, 'cli-list-other').get('/v1/files/list')).body.files).toEqual([]);
  });

  it('delete: file_id as integer or decimal string, purpose optional but matching when given', async () => {
    const api = speechApi(emu.speechUrl, 'cli-delete');
    const wav = await api.audio('Delete me.');
    const one = await api.uploadAudio('voice_clone', wav);
    const asString = await api.post('/v1/files/delete', { file_id: String(one) });
    expect([codeOf(asString), asString.body.file_id, typeof asString.body.file_id]).toEqual([0, one, 'number']);
    expect(asString.text).toContain(`"file_id":${one},`);
    const two = await api.uploadAudio('prompt_audio', wav);
    const wrong = await api.post('/v1/files/delete', { file_id: two, purpose: 'voice_clone' });
    expect(msgOf(wrong)).toBe("invalid params, purpose voice_clone does not match the file's purpose prompt_audio");
    const unknown = await api.post('/v1/files/delete', { file_id: two, purpose: 'vision' });
    expect(msgOf(unknown)).toContain('purpose "vision" is not supported');
    expect(codeOf(await api.post('/v1/files/delete', { file_id: two, purpose: 'prompt_audio' }))).toBe(0);
    const three = await api.uploadAudio('retrieval', Buffer.from('r'));
    expect(codeOf(await api.post('/v1/files/delete', { file_id: three, purpose: 'retrieval' }))).toBe(0);
    // The whole int64 range is well-formed (a file that does not exist); beyond it, or zero, is a bad id.
    const max = await api.post('/v1/files/delete', { file_id: '9223372036854775807' });
    expect(msgOf(max)).toBe('invalid params, file_id 9223372036854775807 is not a file of this account (unknown, deleted, expired or not ready yet)');
    for (const bad of ['9223372036854775808', '0', -1, 1.5, 'x1', '']) {
      const r = await api.post('/v1/files/delete', { file_id: bad });
      expect([codeOf(r), msgOf(r)]).toEqual([
        2013,
        bad === '' ? 'invalid params, file_id is required' : `invalid params, file_id must be a positive integer id (got ${JSON.stringify(bad)})`,
      ]);
    }
    expect(msgOf(await api.post('/v1/files/delete', {}))).toBe('invalid params, file_id is required');
  });

  it('the old CLI paths are the standard unknown route (404)', async () => {
    const auth = { authorization: 'Bearer cli-old' };
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('x')]), 'a.txt');
    form.append('purpose', 'retrieval');
    const known = await call(`${emu.speechUrl}/v1/where-is-this`, { headers: auth });
    expect(known.status).toBe(404);
    for (const [method, r] of [
      ['POST', await call(`${emu.speechUrl}/v1/files`, { method: 'POST', headers: auth, body: form })],
      ['GET', await call(`${emu.speechUrl}/v1/files`, { headers: auth })],
      ['DELETE', await call(`${emu.speechUrl}/v1/files?file_id=123`, { method: 'DELETE', headers: auth })],
    ] as const) {
      expect(r.status).toBe(404);
      const msg = known.body.base_resp.status_msg.replace('GET /v1/where-is-this', `${method} /v1/files`);
      expect(r.body).toEqual({ ...known.body, trace_id: r.body.trace_id, base_resp: { ...known.body.base_resp, status_msg: msg } });
    }
  });
});

describe('video retention across a restart and a reset', () => {
  it('a data dir keeps the expiry; reset removes the files', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'speech-files-keep-'));
    try {
      const first = await startTestEmulator({ dataDir });
      await control(first.speechUrl).freeze(true);
      const api = speechApi(first.speechUrl, 'cli-keep');
      const id = (await api.upload('video_understanding', media.mp4!, 'v.mp4')).body.file.file_id;
      const now = (await control(first.speechUrl).clock()).body.now_ms;
      await first.close();
      const second = await startTestEmulator({ dataDir });
      try {
        const again = speechApi(second.speechUrl, 'cli-keep');
        await control(second.speechUrl).setClock({ set_ms: now + 7 * DAY - 1, freeze: true });
        expect(codeOf(await again.get(`/v1/files/retrieve?file_id=${id}`))).toBe(0);
        await control(second.speechUrl).setClock({ set_ms: now + 7 * DAY });
        expect(codeOf(await again.get(`/v1/files/retrieve?file_id=${id}`))).toBe(2013);
        const other = (await again.upload('retrieval', Buffer.from('x'), 'x.txt')).body.file.file_id;
        await control(second.speechUrl).reset('cli-keep');
        expect(codeOf(await again.get(`/v1/files/retrieve?file_id=${other}`))).toBe(2013);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('files on the backup listener', () => {
  it('list without purpose and delete by string id answer the same on both listeners', async () => {
    const primary = speechApi(emu.speechUrl, 'cli-backup');
    const backup = speechApi(emu.speechBackupUrl, 'cli-backup');
    const id = await primary.uploadAudio('retrieval', Buffer.from('on both'), 'b.txt');
    expect((await backup.get('/v1/files/list')).body.files.map((f: any) => f.file_id)).toEqual([id]);
    const del = await backup.post('/v1/files/delete', { file_id: String(id) });
    expect([codeOf(del), del.body.file_id]).toEqual([0, id]);
    expect((await primary.get('/v1/files/list')).body.files).toEqual([]);
  });
});
