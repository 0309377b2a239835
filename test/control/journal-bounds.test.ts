import { describe, expect, it } from 'vitest';
import { call, control, emulatorForFile } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';
import { session } from '../speech/ws/ws-helpers.js';

/** The journal's bounds: what it keeps of a body, a frame or a summary too large to keep whole. */
const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });

const verify = (request: Record<string, unknown>, expect_: Record<string, unknown> = {}) => ctl.call('POST', '/verify', { request, ...expect_ });
const newest = async (q: Record<string, string | number> = {}) => (await ctl.journal({ limit: 1, ...q })).body.entries[0];

describe('summaries held to their bounds', () => {
  it('a faulted body over 16 KiB is kept as its JSON summary too (verify matches its fields); a summary is bounded in bytes', async () => {
    const padded = {
      ...req({}, 'Boom big'),
      pronunciation_dict: { tone: Array.from({ length: 400 }, (_, i) => `word${i}/(wo${i})`) },
      pad: 'p'.repeat(20_000),
    };
    await t2a(emu.speechUrl, padded, { headers: { 'X-Emulator-Fault': 'code=1002' } });
    expect((await newest()).request.body).toMatchObject({ text: 'Boom big', pad: `${'p'.repeat(64)}…(20000 chars)` });
    expect((await verify({ code: 1002, body: { text: 'Boom big' } }, { exactly: 1 })).status).toBe(200);

    // 50 × 50 × 40 small fields: within the field caps, but their summary would hold them all
    const deep = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [
        `a${i}`,
        Object.fromEntries(Array.from({ length: 50 }, (_, j) => [`b${j}`, Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`c${k}`, k]))])),
      ]),
    );
    await t2a(emu.speechUrl, { ...req({}, 'Deep.'), deep });
    const body = (await newest()).request.body;
    expect(typeof body).toBe('string');
    expect(body).toMatch(/^\{"model":.*…\(\d+ chars\)$/);
    expect(body.length).toBeLessThan(16 * 1024 + 32);
  });

  it('a body of many fields is kept as its first 50 and their count (the summary stays small whatever the body holds)', async () => {
    const extra: Record<string, number> = {};
    for (let i = 0; i < 30_000; i++) extra[`field_${i}`] = i;
    await t2a(emu.speechUrl, { ...req({}, 'Wide body.'), extra });
    const body = (await newest()).request.body;
    expect(Object.keys(body.extra)).toHaveLength(51);
    expect(body.extra).toMatchObject({ field_0: 0, field_49: 49, '…': '(30000 fields)' });
    expect((await verify({ body: { text: 'Wide body.', extra: { field_3: 3 } } }, { exactly: 1 })).status).toBe(200);
  });

  it('a frame of many small fields is held to the per-frame bound too (the start of its JSON), and no credential in it is kept', async () => {
    const wide: Record<string, unknown> = { event: 'task_start', api_key: 'frame-secret-key-1', tokens: ['x'] };
    // 100 × 100 small fields: even its summary (50 × 50 fields) is over the frame's bound
    const row = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i]));
    for (let i = 0; i < 100; i++) wide[`k${i}`] = row;
    await session(emu.speechUrl, [wide]);
    const frame = (await newest({ path: '/ws/v1/t2a_v2' })).ws_frames.find((f: any) => f.dir === 'in' && f.type === 'text');
    expect(frame.truncated).toBe(true);
    // kept as the start of its JSON, cut at the bound
    expect(frame.content).toMatch(/^\{"event":"task_start","api_key":"fram…[0-9a-f]{6}".*…\(\d+ chars\)$/);
    expect(frame.content.length).toBeLessThan(4096 + 32);
    expect(JSON.stringify(frame)).not.toMatch(/frame-secret-key/);
  });
});

describe('a body over the size limit', () => {
  const big = JSON.stringify({ model: 'speech-02-hd', text: 'x'.repeat(1_100_000) });
  /** Sent chunked: no Content-Length tells its size. */
  const chunked = (url: string, headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit).then((r) => r.json() as Promise<any>);

  it('speech: kept as its announced size and the limit it broke, unread; verify finds it by path and code', async () => {
    const r = await t2a(emu.speechUrl, null, { raw: big, key: 'witness-big' });
    expect(r.body.base_resp.status_code).toBe(2013);
    expect((await newest()).request.body).toEqual({ bytes: Buffer.byteLength(big), content_type: 'application/json', over_limit: true, limit: 1_048_576 });
    const found = await verify({ path: '/v1/t2a_v2', code: 2013, body: { over_limit: true } }, { exactly: 1 });
    expect(found.body).toMatchObject({ ok: true, count: 1 });

    // chunked: its size is not known, only that it broke the limit
    expect((await chunked(`${emu.speechUrl}/v1/t2a_v2`, { authorization: 'Bearer witness-big' })).base_resp.status_code).toBe(2013);
    expect((await newest()).request.body).toEqual({ content_type: 'application/json', over_limit: true, limit: 1_048_576 });

    // refused by a fault before the body is read: the same summary, not the body's first megabyte
    const faulted = await t2a(emu.speechUrl, null, { raw: big, key: 'witness-big', headers: { 'X-Emulator-Fault': 'status=503' } });
    expect(faulted.status).toBe(503);
    expect((await newest()).request.body).toEqual({ bytes: Buffer.byteLength(big), content_type: 'application/json', over_limit: true, limit: 1_048_576 });
  });

  it('platform: the same summary on the family error; chunked without a size', async () => {
    const pc = control(emu.platformUrl);
    const url = `${emu.platformUrl}/v1/text-to-speech`;
    const r = await call(url, { body: big, headers: { 'content-type': 'application/json', 'x-api-key': 'witness-big' } });
    expect(r.body.error_code).toBe(10001);
    expect((await pc.journal({ limit: 1 })).body.entries[0].request.body).toEqual({
      bytes: Buffer.byteLength(big),
      content_type: 'application/json',
      over_limit: true,
      limit: 1_048_576,
    });
    expect((await chunked(url, { 'x-api-key': 'witness-big' })).error_code).toBe(10001);
    expect((await pc.journal({ limit: 1 })).body.entries[0].request.body).toEqual({ content_type: 'application/json', over_limit: true, limit: 1_048_576 });
    const found = await pc.call('POST', '/verify', { request: { path: '/v1/text-to-speech', code: 10001, body: { over_limit: true } }, exactly: 2 });
    expect(found.body).toMatchObject({ ok: true, count: 2 });

    // an upload is not held to the JSON limit: refused (no key), it is kept by its whole size, not as over the limit
    const form = new FormData();
    form.append('purpose', 'voice_clone');
    form.append('file', new Blob([Buffer.alloc(3_000_000)], { type: 'audio/wav' }), 'big.wav');
    const upload = await call(`${emu.platformUrl}/v1/files/upload`, { body: form });
    expect(upload.body.error_code).toBeDefined();
    const body = (await pc.journal({ limit: 1 })).body.entries[0].request.body;
    expect(body).toEqual({ bytes: expect.any(Number), content_type: expect.stringMatching(/^multipart\/form-data/) });
    expect(body.bytes).toBeGreaterThan(3_000_000);
  });
});

describe('an upload', () => {
  it('a multipart upload is kept by its size and content type, accepted or refused alike, on both services', async () => {
    const form = () => {
      const f = new FormData();
      f.append('purpose', 'voice_clone');
      f.append('file', new Blob([Buffer.alloc(30_000)], { type: 'audio/wav' }), 'voice.wav');
      return f;
    };
    const multipart = { bytes: expect.any(Number), content_type: expect.stringMatching(/^multipart\/form-data; boundary=/) };
    await call(`${emu.speechUrl}/v1/files/upload`, { body: form(), headers: { authorization: 'Bearer witness-up' } });
    const speech = (await newest()).request.body;
    expect(speech).toEqual(multipart);
    expect(speech.bytes).toBeGreaterThan(30_000);
    await call(`${emu.speechUrl}/v1/files/upload`, { body: form(), headers: { authorization: 'Bearer witness-up', 'X-Emulator-Fault': 'code=1002' } });
    expect((await newest()).request.body).toEqual({ ...multipart, bytes: speech.bytes });

    const pc = control(emu.platformUrl);
    await call(`${emu.platformUrl}/v1/files/upload`, { body: form(), headers: { 'x-api-key': 'witness-up' } });
    expect((await pc.journal({ limit: 1 })).body.entries[0].request.body).toEqual(multipart);
  });
});
