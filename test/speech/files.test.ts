import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, PANGRAM, resourcesOf, speechApi } from './beyond.js';
import { ffprobe } from '../helpers/ffprobe.js';

/** `/v1/files/*` of the speech service (section 3, rule 12.9). */
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });

/** Sends raw bytes over a socket and answers the whole reply (the server must answer and close). */
function rawHttp(port: number, head: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      // The whole declared length arrives, but the multipart framing never closes (no final boundary).
      s.write(head);
      s.write(body);
    });
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

describe('files', () => {
  it('a name in any script downloads with Content-Disposition per RFC 6266: an ASCII filename and the UTF-8 filename*', async () => {
    const api = speechApi(emu.speechUrl, 'files-names');
    for (const name of ['日本語.txt', 'smile 😀.txt', 'line\u2028sep.txt', 'del\u007f.txt', 'café.txt', 'plain.txt']) {
      const up = await api.upload('t2a_async_input', Buffer.from(PANGRAM), name);
      expect(up.body.base_resp.status_code, name).toBe(0);
      const got = await api.getBytes(`/v1/files/retrieve_content?file_id=${up.body.file.file_id}`);
      expect(got.status, name).toBe(200);
      expect(got.bytes.toString('utf8'), name).toBe(PANGRAM);
      const header = got.headers.get('content-disposition')!;
      const fallback = /filename="([^"]*)"/.exec(header)![1]!;
      expect(fallback, name).toMatch(/^[\x20-\x7e]+$/);
      const star = /filename\*=UTF-8''(\S+)/.exec(header)?.[1];
      expect(star ? decodeURIComponent(star) : fallback, name).toBe(up.body.file.filename);
      expect(up.body.file.filename, name).toBe(name);
    }
  });

  it('upload → list → retrieve (signed link, 24 h) → retrieve_content → delete', async () => {
    const api = speechApi(emu.speechUrl, 'files-owner');
    const wav = await api.audio('Hello there.');
    const up = await api.upload('voice_clone', wav, 'hello.wav');
    expect([up.status, codeOf(up)]).toEqual([200, 0]);
    const file = up.body.file;
    expect(Object.keys(file).sort()).toEqual(['bytes', 'created_at', 'file_id', 'filename', 'purpose']);
    expect(Number.isSafeInteger(file.file_id)).toBe(true);
    expect(file.file_id).toBeLessThan(2 ** 53);
    expect(file).toMatchObject({ bytes: wav.length, filename: 'hello.wav', purpose: 'voice_clone' });

    const list = await api.get('/v1/files/list?purpose=voice_clone');
    expect(list.body.files).toEqual([file]);
    expect((await api.get('/v1/files/list?purpose=prompt_audio')).body.files).toEqual([]);

    const ret = await api.get(`/v1/files/retrieve?file_id=${file.file_id}`);
    expect(ret.body.file).toMatchObject(file);
    const url = new URL(ret.body.file.download_url);
    const now = (await control(emu.speechUrl).clock()).body.now_ms;
    expect(Number(url.searchParams.get('expires')) - now).toBe(24 * 3600 * 1000);
    const dl = await fetch(url); // a plain GET, no key
    expect(dl.status).toBe(200);
    expect(Buffer.from(await dl.arrayBuffer()).equals(wav)).toBe(true);

    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${file.file_id}`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('audio/wav');
    expect(content.bytes.equals(wav)).toBe(true);
    expect((await ffprobe(content.bytes, { ext: 'wav' })).codec).toBe('pcm_s16le');

    const del = await api.post('/v1/files/delete', { file_id: file.file_id, purpose: 'voice_clone' });
    expect([codeOf(del), del.body.file_id]).toEqual([0, file.file_id]);
    const gone = await api.get(`/v1/files/retrieve?file_id=${file.file_id}`);
    expect(codeOf(gone)).toBe(2013);
    expect(msgOf(gone)).toContain(`file_id ${file.file_id}`);
    expect((await api.get('/v1/files/list?purpose=voice_clone')).body.files).toEqual([]);
  });

  it('the backup listener serves the same files; its links point at itself', async () => {
    const primary = speechApi(emu.speechUrl, 'files-backup');
    const backup = speechApi(emu.speechBackupUrl, 'files-backup');
    const id = await primary.uploadAudio('voice_clone', await primary.audio('Both listeners.'));
    const r = await backup.get(`/v1/files/retrieve?file_id=${id}`);
    expect(codeOf(r)).toBe(0);
    expect(r.body.file.download_url.startsWith(emu.speechBackupUrl)).toBe(true);
    expect((await fetch(r.body.file.download_url)).status).toBe(200);
    expect((await backup.get('/v1/files/list?purpose=voice_clone')).body.files.map((f: any) => f.file_id)).toEqual([id]);
  });

  it('a download link expires after 24 h on the emulator clock', async () => {
    const api = speechApi(emu.speechUrl, 'files-expiry');
    const id = await api.uploadAudio('prompt_audio', await api.audio('Short one.'));
    const url = (await api.get(`/v1/files/retrieve?file_id=${id}`)).body.file.download_url;
    await control(emu.speechUrl).advance(24 * 3600 * 1000 + 1);
    expect((await fetch(url)).status).toBe(403);
    // The upload itself is kept until deleted.
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${id}`))).toBe(0);
  });

  it('files are invisible to other keys: 2013 naming file_id, as for an unknown id', async () => {
    const owner = speechApi(emu.speechUrl, 'files-a');
    const other = speechApi(emu.speechUrl, 'files-b');
    const id = await owner.uploadAudio('voice_clone', await owner.audio('Mine.'));
    for (const r of [
      await other.get(`/v1/files/retrieve?file_id=${id}`),
      await other.get(`/v1/files/retrieve_content?file_id=${id}`),
      await other.post('/v1/files/delete', { file_id: id, purpose: 'voice_clone' }),
      await owner.get('/v1/files/retrieve?file_id=123456789'),
    ]) {
      expect(r.status).toBe(200);
      expect(codeOf(r)).toBe(2013);
      expect(msgOf(r)).toMatch(/file_id \d+ is not a file of this account/);
    }
    expect((await other.get('/v1/files/list?purpose=voice_clone')).body.files).toEqual([]);
    expect(codeOf(await owner.get(`/v1/files/retrieve?file_id=${id}`))).toBe(0);
  });

  it('content is sniffed per purpose; text inputs take txt and zip', async () => {
    const api = speechApi(emu.speechUrl, 'files-sniff');
    const text = await api.upload('voice_clone', Buffer.from('just some words'), 'a.wav');
    expect(codeOf(text)).toBe(2013);
    expect(msgOf(text)).toContain('purpose voice_clone accepts mp3, m4a or wav');
    const audioAsText = await api.upload('t2a_async_input', await api.audio('Hi.'), 'a.txt');
    expect(codeOf(audioAsText)).toBe(2013);
    expect(msgOf(audioAsText)).toContain('t2a_async_input accepts txt or zip');
    const txt = await api.upload('t2a_async_input', Buffer.from(PANGRAM), 'input.txt');
    expect(codeOf(txt)).toBe(0);
    const zip = await api.upload('t2a_async_input', Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'latin1'), 'input.zip');
    expect(codeOf(zip)).toBe(0);
    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${txt.body.file.file_id}`);
    expect(content.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const mp3 = await api.upload('prompt_audio', await api.audio('Hi.', { format: 'mp3', sampleRate: 32000 }), 'p.mp3');
    expect(codeOf(mp3)).toBe(0);
    expect((await api.getBytes(`/v1/files/retrieve_content?file_id=${mp3.body.file.file_id}`)).headers.get('content-type')).toBe('audio/mpeg');
  });

  it('bad uploads: purpose missing or unknown, file missing or empty, over 20 MB, not multipart', async () => {
    const api = speechApi(emu.speechUrl, 'files-bad');
    const wav = await api.audio('Hi.');
    const cases: [Promise<any>, string][] = [
      [
        api.upload(undefined, wav),
        'invalid params, purpose is required; use one of voice_clone, prompt_audio, t2a_async_input, video_understanding, video_generation_input, retrieval',
      ],
      [
        api.upload('video_generation', wav),
        'invalid params, purpose "video_generation" is not supported; use one of voice_clone, prompt_audio, t2a_async_input, video_understanding, video_generation_input, retrieval',
      ],
      [api.upload('voice_clone', undefined), 'invalid params, file is required (a file part named file)'],
      [api.upload('voice_clone', Buffer.alloc(0)), 'invalid params, file is empty'],
      [api.upload('voice_clone', Buffer.alloc(20 * 1024 * 1024 + 1, 1)), 'invalid params, file is larger than 20 MB, the upload limit'],
      [api.post('/v1/files/upload', { purpose: 'voice_clone' }), 'invalid params, request must be multipart/form-data with the parts purpose and file'],
    ];
    for (const [p, msg] of cases) {
      const r = await p;
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, msg]);
    }
    expect((await api.get('/v1/files/list?purpose=voice_clone')).body.files).toEqual([]);
  });

  it('a multipart body that ends early is answered with 2013', async () => {
    const port = Number(new URL(emu.speechUrl).port);
    const body = Buffer.from(
      '--XYZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvoice_clone\r\n--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF....',
    );
    const head = `POST /v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer files-early\r\nContent-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const reply = await rawHttp(port, head, body);
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    const json = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n/, ''));
    expect(json.base_resp.status_code).toBe(2013);
    expect(json.base_resp.status_msg).toContain('multipart body could not be read');
  });

  it('list, retrieve and delete name the field they reject', async () => {
    const api = speechApi(emu.speechUrl, 'files-params');
    // Without purpose the list answers all files (rule E18, files-cli.test.ts).
    expect(codeOf(await api.get('/v1/files/list'))).toBe(0);
    expect(msgOf(await api.get('/v1/files/list?purpose=x'))).toContain('purpose "x" is not supported');
    expect(msgOf(await api.get('/v1/files/retrieve'))).toBe('invalid params, file_id is required');
    expect(msgOf(await api.get('/v1/files/retrieve?file_id=abc'))).toBe('invalid params, file_id must be a positive integer id (got "abc")');
    const id = await api.uploadAudio('voice_clone', await api.audio('Hi.'));
    const wrong = await api.post('/v1/files/delete', { file_id: id, purpose: 'prompt_audio' });
    expect(msgOf(wrong)).toBe("invalid params, purpose prompt_audio does not match the file's purpose voice_clone");
    // The page declares multipart for delete: both forms are read.
    const form = new FormData();
    form.append('file_id', String(id));
    form.append('purpose', 'voice_clone');
    const del = await api.raw('/v1/files/delete', { method: 'POST', body: form });
    expect(codeOf(del)).toBe(0);
  });

  it("state view lists an account's files; reset of the account removes them", async () => {
    const api = speechApi(emu.speechUrl, 'files-reset');
    const id = await api.uploadAudio('voice_clone', await api.audio('Keep me.'));
    const items = await resourcesOf(emu.speechUrl, 'speech-files', (fs) => fs.some((f) => f.file_id === id));
    expect(items.find((f) => f.file_id === id)).toMatchObject({ purpose: 'voice_clone', format: 'wav' });
    await control(emu.speechUrl).reset('files-reset');
    expect(codeOf(await api.get(`/v1/files/retrieve?file_id=${id}`))).toBe(2013);
  });
});
