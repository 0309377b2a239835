// POST /v1/speech_to_text, what it refuses and how (speech-current.md E1, E4, E22): the form's rules, the
// language header, multipart only, the file part's size and the duration limit with their exact texts,
// containers it does not take, keys, balance, account limits, content safety and faults, each with its
// real HTTP status and the error body of 1.6; both listeners; the journal, usage and reset; the document.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../../helpers/emulator.js';
import { silentWav, toneWav } from '../../helpers/transcode.js';
import { expectSttError, speak, stt, STT_KEY, sttFile } from './stt-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const wav = toneWav(1);
const bad = (detail: string) => `invalid params, ${detail} (2013)`;
const CODES = 'zh, yue, en, ja, ko, th, vi, id, ms, fil, ar, tr, fr, de, es, it, pt, pl, ru, uk';

afterAll(async () => {
  await ctl.call('POST', '/reset?fixtures=true');
});

describe('the form (400 bad_request_error 2013)', () => {
  const cases: [string, Parameters<typeof stt>[1], string][] = [
    ['model missing', { fields: { model: null }, files: [{ bytes: wav }] }, bad('model is required; use asr-1.0')],
    ['model other', { fields: { model: 'asr-2.0' }, files: [{ bytes: wav }] }, bad('model "asr-2.0" is not supported; use asr-1.0')],
    ['file missing', { fields: {} }, bad('file is required (one file part named file)')],
    ['file as a text part', { fields: { file: 'abc' } }, bad('file is required (one file part named file)')],
    ['file twice', { files: [{ bytes: wav }, { bytes: wav }] }, bad('file must be sent exactly once (got 2 file parts)')],
    [
      'response_format',
      { fields: { response_format: 'text' }, files: [{ bytes: wav }] },
      bad('response_format "text" is not supported; use one of json, verbose_json, srt, vtt'),
    ],
    [
      'timestamp_level',
      { fields: { timestamp_level: 'segment' }, files: [{ bytes: wav }] },
      bad('timestamp_level "segment" is not supported; use one of "", sentence, word'),
    ],
    ['stream', { fields: { stream: 'yes' }, files: [{ bytes: wav }] }, bad('stream "yes" must be true or false')],
    [
      'stream with srt',
      { fields: { stream: 'True', response_format: 'srt' }, files: [{ bytes: wav }] },
      bad('stream=true requires response_format json (got response_format "srt")'),
    ],
    [
      'language header with a region',
      { files: [{ bytes: wav }], headers: { language: 'en-US' } },
      bad(`language header "en-US" is not supported; use one of ${CODES}, or none for mixed mode`),
    ],
    [
      'language header unknown',
      { files: [{ bytes: wav }], headers: { language: 'xx' } },
      bad(`language header "xx" is not supported; use one of ${CODES}, or none for mixed mode`),
    ],
  ];
  for (const [name, opts, message] of cases) {
    it(`${name}: ${message}`, async () => {
      expectSttError(await stt(emu.speechUrl, opts), 400, 'bad_request_error', message);
    });
  }

  it('a stream refused before the status line is a JSON error, not an event stream', async () => {
    const res = await stt(emu.speechUrl, { fields: { stream: 'true', model: 'x' }, files: [{ bytes: wav }] });
    expectSttError(res, 400, 'bad_request_error', bad('model "x" is not supported; use asr-1.0'));
  });

  it('accepted: the 20 codes in any case, an empty header, a language form field (ignored), unknown parts, stream=FALSE', async () => {
    for (const code of CODES.split(', ')) expect((await sttFile(emu.speechUrl, wav, {}, { headers: { language: code.toUpperCase() } })).status).toBe(200);
    expect((await sttFile(emu.speechUrl, wav, {}, { headers: { language: '' } })).status).toBe(200);
    const extra = await stt(emu.speechUrl, {
      fields: { language: 'not-a-code', prompt: 'ignored', stream: 'FALSE' },
      files: [{ bytes: wav }, { bytes: Buffer.from('other'), name: 'attachment' }],
    });
    expect(extra.status, extra.text).toBe(200);
    expect(extra.body.duration).toBe(1);
  });

  for (const [type, body] of [
    ['application/json', '{"model":"asr-1.0"}'],
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'model=asr-1.0'],
    ['application/json', '{broken'],
  ] as const) {
    it(`a ${type} body is 2013: only multipart/form-data is read`, async () => {
      const res = await call(`${emu.speechUrl}/v1/speech_to_text`, {
        method: 'POST',
        headers: { authorization: `Bearer ${STT_KEY}`, 'content-type': type },
        body,
      });
      expectSttError(res, 400, 'bad_request_error', bad('request body must be multipart/form-data with the parts model and file'));
    });
  }

  it('a multipart body cut in the middle is 2013, never a hang or a 500', async () => {
    const boundary = 'XyZ';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nasr-1.0\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nRIFF`;
    const res = await call(`${emu.speechUrl}/v1/speech_to_text`, {
      method: 'POST',
      headers: { authorization: `Bearer ${STT_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expectSttError(res, 400, 'bad_request_error', /^invalid params, multipart body could not be read \(.+\) \(2013\)$/);
  });
});

describe('the audio', () => {
  it('a file part over 52,428,800 bytes is 413 invalid_request_error with the true size; exactly the limit is read', async () => {
    const over = silentWav(52_428_800 - 44 + 1, 48000, 2, 16);
    const res = await sttFile(emu.speechUrl, over);
    expectSttError(res, 413, 'invalid_request_error', 'request body too large: 52428801 bytes exceeds limit of 52428800 bytes');
    const at = silentWav(52_428_800 - 44, 48000, 2, 16);
    const ok = await sttFile(emu.speechUrl, at);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.duration).toBe(Math.round((Math.floor((52_428_800 - 44) / 4) / 48000) * 1000) / 1000);
  });

  it('500.0 s is accepted; 500.1 s is 400 with the duration in the text', async () => {
    const exact = await sttFile(emu.speechUrl, silentWav(4_000_000, 8000, 1, 8));
    expect(exact.status, exact.text).toBe(200);
    expect(exact.body.duration).toBe(500);
    const over = await sttFile(emu.speechUrl, silentWav(4_000_800, 8000, 1, 8));
    expectSttError(over, 400, 'bad_request_error', 'invalid params, audio duration 500.1s exceeds the limit of 500s (2013)');
  });

  it('containers not listed (raw PCM, WebM, text) are unsupported; a listed one that cannot be parsed is undecodable; empty is refused', async () => {
    for (const bytes of [Buffer.alloc(4000, 3), Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 1, 2, 3, 4, 5, 6]), Buffer.from('just some text')])
      expectSttError(await sttFile(emu.speechUrl, bytes), 400, 'bad_request_error', 'invalid params, unsupported audio format (2013)');
    for (const bytes of [Buffer.from('fLaC\0\0\0\0'), Buffer.from('RIFF\0\0\0\0WAVEjunk', 'latin1'), Buffer.from('OggS\0\x02', 'latin1')])
      expectSttError(await sttFile(emu.speechUrl, bytes), 400, 'bad_request_error', 'invalid params, audio could not be decoded (2013)');
    expectSttError(await sttFile(emu.speechUrl, Buffer.alloc(0)), 400, 'bad_request_error', bad('file is empty'));
  });

  it('the container comes from the bytes: the part content type and filename are ignored', async () => {
    const form = new FormData();
    form.append('model', 'asr-1.0');
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'video/webm' }), 'clip.webm');
    const res = await call(`${emu.speechUrl}/v1/speech_to_text`, { method: 'POST', headers: { authorization: `Bearer ${STT_KEY}` }, body: form });
    expect(res.status).toBe(200);
  });
});

describe('keys, balance, limits, content, faults', () => {
  const LOGIN = "login fail: Please carry the API secret key in the 'Authorization' field of the request header (1004)";

  it('no key: 401 authorized_error 1004 with the documented text, before the body is read', async () => {
    expectSttError(await sttFile(emu.speechUrl, wav, {}, { key: null }), 401, 'authorized_error', LOGIN);
    const res = await call(`${emu.speechUrl}/v1/speech_to_text`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expectSttError(res, 401, 'authorized_error', LOGIN);
  });

  it('a disabled key: 401 1004', async () => {
    await ctl.putAccount('stt-disabled', { disabled: true });
    expectSttError(await sttFile(emu.speechUrl, wav, {}, { key: 'stt-disabled' }), 401, 'authorized_error', LOGIN);
  });

  it('a key without the speech capability (tts): 401 1004 naming it', async () => {
    await ctl.putAccount('stt-no-tts', { capabilities: ['recognition'] });
    expectSttError(
      await sttFile(emu.speechUrl, wav, {}, { key: 'stt-no-tts' }),
      401,
      'authorized_error',
      'login fail: the API secret key has no access to speech to text (capability tts) (1004)',
    );
  });

  it('a balance under 2.50 per audio hour: 402 insufficient_balance_error 1008; the charge is the duration at that price', async () => {
    // 1 s costs ceil(2,500,000 / 3,600) = 695 micro-units.
    await ctl.putAccount('stt-poor', { balance_micro: 694 });
    expectSttError(await sttFile(emu.speechUrl, wav, {}, { key: 'stt-poor' }), 402, 'insufficient_balance_error', 'insufficient balance (1008)');
    await ctl.putAccount('stt-poor', { balance_micro: 700 });
    expect((await sttFile(emu.speechUrl, wav, {}, { key: 'stt-poor' })).status).toBe(200);
    expect((await ctl.account('stt-poor')).body.balance_micro).toBe(5);
  });

  it('429 rate_limit_error 1002 only with a configured speech_to_text_per_minute, reopening on the clock', async () => {
    for (let i = 0; i < 3; i++) expect((await sttFile(emu.speechUrl, wav, {}, { key: 'stt-limited' })).status).toBe(200);
    await ctl.putAccount('stt-limited', { limits: { speech_to_text_per_minute: 1 } });
    await ctl.freeze(true);
    try {
      expect((await sttFile(emu.speechUrl, wav, {}, { key: 'stt-limited' })).status).toBe(200);
      expectSttError(await sttFile(emu.speechUrl, wav, {}, { key: 'stt-limited' }), 429, 'rate_limit_error', 'rate limit, please retry later (1002)');
      await ctl.advance(60_001);
      expect((await sttFile(emu.speechUrl, wav, {}, { key: 'stt-limited' })).status).toBe(200);
    } finally {
      await ctl.freeze(false);
    }
  });

  it('a transcript holding a content-safety term: 422 unprocessable_entity_error 1026', async () => {
    const own = await speak(emu.speechUrl, 'We talk about blocked-by-safety today.');
    const res = await sttFile(emu.speechUrl, own.wav);
    expectSttError(res, 422, 'unprocessable_entity_error', 'audio content contains sensitive content (1026)');
  });

  const faults: [string, number, string, string][] = [
    ['code=1000', 500, 'server_error', 'internal error (1000)'],
    ['status=500', 500, 'server_error', 'internal error (1000)'],
    ['code=1026', 422, 'unprocessable_entity_error', 'audio content contains sensitive content (1026)'],
    ['code=1002', 429, 'rate_limit_error', 'rate limit, please retry later (1002)'],
    ['status=429', 429, 'rate_limit_error', 'rate limit, please retry later (1002)'],
    ['code=1008', 402, 'insufficient_balance_error', 'insufficient balance (1008)'],
    ['status=503', 503, 'server_error', 'internal error (1000)'],
  ];
  for (const [fault, status, type, message] of faults) {
    it(`X-Emulator-Fault ${fault}: ${status} ${type}`, async () => {
      expectSttError(await sttFile(emu.speechUrl, wav, {}, { headers: { 'x-emulator-fault': fault } }), status, type, message);
    });
  }

  it('a queued fault rule on the path answers the same way; never an HTTP 200 with base_resp', async () => {
    await ctl.addFault({ path: '/v1/speech_to_text', fault: { code: 1000 } });
    expectSttError(await sttFile(emu.speechUrl, wav), 500, 'server_error', 'internal error (1000)');
    expect((await sttFile(emu.speechUrl, wav)).status).toBe(200);
  });
});

describe('both listeners, journal, usage, reset, document', () => {
  beforeAll(async () => {
    await ctl.clearJournal();
  });

  it('the backup listener answers the same with the same account', async () => {
    const res = await sttFile(emu.speechBackupUrl, wav, { response_format: 'verbose_json' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ text: '', duration: 1, n_speakers: 0, segments: [] });
    expectSttError(await sttFile(emu.speechBackupUrl, wav, {}, { key: null }), 401, 'authorized_error', /\(1004\)$/);
  });

  it('the journal holds the form fields, the file size, the detected container and the duration', async () => {
    await sttFile(emu.speechUrl, wav, { response_format: 'srt', timestamp_level: 'word' }, { headers: { language: 'en' } });
    const entries = (await ctl.journal({ path: '/v1/speech_to_text' })).body.entries as { status: number; request: { body: unknown } }[];
    const entry = entries.find((e) => (e.request.body as { response_format?: string })?.response_format === 'srt');
    expect(entry?.status).toBe(200);
    expect(entry!.request.body).toEqual({
      model: 'asr-1.0',
      response_format: 'srt',
      timestamp_level: 'word',
      file: { filename: 'audio.bin', bytes: wav.length, container: 'wav', codec: 'pcm', duration: 1, transcript: 'none' },
    });
  });

  it('a streamed answer is journaled with its form, file and events; a refused one with what was read', async () => {
    await ctl.clearJournal();
    const res = await sttFile(emu.speechUrl, wav, { stream: 'true' });
    expect(res.status).toBe(200);
    await sttFile(emu.speechUrl, Buffer.from('not audio at all'), { response_format: 'vtt' });
    const entries = (await ctl.journal({ path: '/v1/speech_to_text' })).body.entries as {
      status: number;
      chunks?: number;
      request: { body: Record<string, unknown> };
      response: { content_type?: string };
    }[];
    const streamed = entries.find((e) => e.request.body.stream === 'true')!;
    expect(streamed.status).toBe(200);
    expect(streamed.chunks).toBe(1);
    expect(streamed.response.content_type).toBe('text/event-stream');
    expect(streamed.request.body.file).toEqual({ filename: 'audio.bin', bytes: wav.length, container: 'wav', codec: 'pcm', duration: 1, transcript: 'none' });
    const refused = entries.find((e) => e.request.body.response_format === 'vtt')!;
    expect(refused.status).toBe(400);
    expect(refused.request.body.file).toEqual({ filename: 'audio.bin', bytes: 16 });
  });

  it('usage is recorded in seconds per account and cleared by a reset', async () => {
    await ctl.reset();
    await sttFile(emu.speechUrl, toneWav(1.5));
    await sttFile(emu.speechUrl, toneWav(0.25));
    const state = await ctl.accountState(STT_KEY);
    expect(state.resources.speech_to_text).toEqual({ requests: 2, audio_seconds: 1.75 });
    await ctl.reset();
    expect((await ctl.accountState(STT_KEY))?.resources?.speech_to_text ?? { requests: 0, audio_seconds: 0 }).toEqual({ requests: 0, audio_seconds: 0 });
  });

  it('the OpenAPI document has the operation: multipart parts, the language header, the error body', async () => {
    const doc = (await call(`${emu.speechUrl}/_emulator/openapi/speech.json`)).body;
    const op = doc.paths['/v1/speech_to_text'].post;
    const form = op.requestBody.content['multipart/form-data'].schema;
    expect(form.required).toEqual(['model', 'file']);
    expect(form.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(form.properties.response_format.enum).toEqual(['json', 'verbose_json', 'srt', 'vtt']);
    expect(op.parameters.find((p: { name: string }) => p.name === 'language')).toMatchObject({ in: 'header' });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '413', '422', '429', '500']));
    // Its errors are its own body with real statuses: no `default` answer in the speech service's base_resp shape.
    expect(op.responses.default).toBeUndefined();
    expect(doc.paths['/v1/t2a_v2'].post.responses.default.content['application/json'].schema.$ref).toBe('#/components/schemas/SpeechError');
  });
});

describe('reading stops at the size limit', () => {
  it('the 413 arrives while the client is still sending: the rest of the body is never read', async () => {
    const url = new URL(emu.speechUrl);
    const boundary = 'limit-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nasr-1.0\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const declared = head.length + 80 * 1024 * 1024; // 80 MB announced, far past the limit
    const socket = connect(Number(url.port), url.hostname);
    await new Promise((r) => socket.once('connect', r));
    socket.on('error', () => undefined);
    let answer = '';
    const answered = new Promise<void>((resolve) => socket.on('data', (d: Buffer) => ((answer += d.toString('latin1')), resolve())));
    socket.write(
      `POST /v1/speech_to_text HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${STT_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n${head}`,
    );
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    // Up to 56 MB, pausing when the socket is full; the answer must come before the 80 MB are sent.
    while (sent < 56 * 1024 * 1024 && !answer) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), answered]);
    }
    await Promise.race([answered, new Promise((r) => setTimeout(r, 10_000))]);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toMatch(/request body too large: \d+ bytes exceeds limit of 52428800 bytes/);
    expect(sent).toBeLessThan(80 * 1024 * 1024);
  });
});
