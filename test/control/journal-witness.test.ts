import { describe, expect, it } from 'vitest';
import { call, control, emulatorForFile } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';
import { session, START } from '../speech/ws/ws-helpers.js';
import { connect, flush, sendFrames, spokenPcm, wsUrl } from '../platform/conversation/conversation-helpers.js';

/** The journal as the test's witness: every request recorded whole, and verify matching what a test needs. */
const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });

const verify = (request: Record<string, unknown>, expect_: Record<string, unknown> = {}) => ctl.call('POST', '/verify', { request, ...expect_ });
const newest = async (q: Record<string, string | number> = {}) => (await ctl.journal({ limit: 1, ...q })).body.entries[0];

describe('a faulted request is recorded whole', () => {
  it('a header fault (code=1002): its body is journaled and matched by verify, the fault names its origin and what it did', async () => {
    const r = await t2a(emu.speechUrl, req({}, 'Boom'), { key: 'witness-a', headers: { 'X-Emulator-Fault': 'code=1002' } });
    expect(r.body.base_resp.status_code).toBe(1002);
    await t2a(emu.speechUrl, req({}, 'Boom'), { key: 'witness-a' });

    const entry = (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries[1];
    expect(entry.request.body).toMatchObject({ text: 'Boom' });
    expect(entry.fault).toEqual({ origin: 'header', code: 1002 });
    // the retry test: the same text sent twice, the first one faulted
    expect((await verify({ code: 1002, body: { text: 'Boom' } }, { exactly: 1 })).body).toMatchObject({ ok: true, count: 1 });
    expect((await verify({ body: { text: 'Boom' } }, { exactly: 2 })).body.count).toBe(2);
    expect((await verify({ body: { text: 'Boom' }, fault: true }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ body: { text: 'Boom' }, fault: false, code: 0 }, { exactly: 1 })).status).toBe(200);
  });

  it('a rule fault (status=429, then code=1039): bodies journaled, origin is the rule id, unexpressed fields are listed ignored', async () => {
    const rule = await ctl.addFault({ path: '/v1/t2a_v2', times: 1, fault: { status: 429, cut_after_chunks: 2 } });
    const first = await t2a(emu.speechUrl, req({}, 'Rule one'), { key: 'witness-b' });
    expect(first.status).toBe(429);
    const second = await ctl.addFault({ path: '/v1/t2a_v2', fault: { code: 1039 } });
    await t2a(emu.speechUrl, req({}, 'Rule two'), { key: 'witness-b' });

    const [two, one] = (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries;
    expect(one.fault).toEqual({ origin: rule.body.id, status: 429, ignored: ['cut_after_chunks'] });
    expect(one.request.body).toMatchObject({ text: 'Rule one' });
    expect(two.fault).toEqual({ origin: second.body.id, code: 1039 });
    expect((await verify({ status: 429, body: { text: 'Rule one' } }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ code: 1039, body: { text: 'Rule two' } }, { exactly: 1 })).status).toBe(200);
  });

  it('a refused key keeps its body too, and a body that is not JSON is kept as bounded text; the answers are unchanged', async () => {
    const noKey = await t2a(emu.speechUrl, req({}, 'No key'), { key: null });
    expect(noKey.body.base_resp.status_code).toBe(1004);
    expect((await newest()).request.body).toMatchObject({ text: 'No key' });

    const raw = `not json ${'x'.repeat(400)}`;
    const faulted = await t2a(emu.speechUrl, null, { raw, headers: { 'X-Emulator-Fault': 'code=1002' } });
    expect(faulted.body.base_resp.status_code).toBe(1002);
    expect((await newest()).request.body).toBe(`${raw.slice(0, 64)}…(${raw.length} chars)`);

    // a platform body that is not JSON, refused by the parser: the journal shows what arrived
    const unparsed = await call(`${emu.platformUrl}/v1/audio/assistant/start`, {
      body: 'hello there',
      headers: { 'content-type': 'application/json', 'x-api-key': 'witness-a' },
    });
    expect(unparsed.body.error_code).toBeDefined();
    const pc = control(emu.platformUrl);
    expect((await pc.journal({ limit: 1 })).body.entries[0].request.body).toBe('hello there');
    // and on a route that reads JSON with the platform's own parser: the same 10001 answer, the body kept
    const tts = await call(`${emu.platformUrl}/v1/text-to-speech`, {
      body: '{"text": oops',
      headers: { 'content-type': 'application/json', 'x-api-key': 'witness-a' },
    });
    expect(tts.status).toBe(400);
    expect(tts.body.error_code).toBe(10001);
    expect(tts.body.error_message).toMatch(/not valid JSON/);
    expect((await pc.journal({ limit: 1 })).body.entries[0].request.body).toBe('{"text": oops');
  });

  it('a stream cut by cut_after_chunks: the fault says the chunk it cut at; the stream its bytes and first event without audio', async () => {
    const r = await t2a(emu.speechUrl, req({ stream: true }, 'A longer text that makes several chunks of audio to cut.'), {
      headers: { 'X-Emulator-Fault': 'cut_after_chunks=2' },
    }).catch(() => null);
    expect(r?.status ?? 200).toBe(200);
    const entry = await newest();
    expect(entry.fault).toEqual({ origin: 'header', cut_after_chunks: 2, cut_at_chunk: 2 });
    expect(entry.chunks).toBe(2);
    expect(entry.stream.bytes).toBeGreaterThan(0);
    expect(entry.stream.first_event).toMatchObject({ data: { audio: { chars: expect.any(Number) }, status: 1 }, trace_id: expect.any(String) });
    expect(JSON.stringify(entry.stream)).not.toMatch(/[0-9a-f]{64}/);
  });

  it('delay_ms, audio faults and close_ws are named with what they did', async () => {
    await t2a(emu.speechUrl, req(), { headers: { 'X-Emulator-Fault': 'delay_ms=5' } });
    expect((await newest()).fault).toEqual({ origin: 'header', delay_ms: 5 });

    const r = await t2a(emu.speechUrl, req({ stream: true }, 'A text long enough for several audio chunks to be damaged here.'), {
      headers: { 'X-Emulator-Fault': 'hex_odd=1;duplicate_chunk=1' },
    });
    expect(r.status).toBe(200);
    const streamed = await newest();
    expect(streamed.fault).toMatchObject({ origin: 'header', hex_odd: 1, duplicate_chunk: 1, audio_faults: ['hex_odd=1', 'duplicate_chunk=1'] });

    const closed = await session(emu.speechUrl, [START], { headers: { 'X-Emulator-Fault': 'close_ws=4001' } });
    expect(closed.close.code).toBe(4001);
    expect((await newest({ path: '/ws/v1/t2a_v2' })).fault).toEqual({ origin: 'header', close_ws: 4001 });
    expect((await verify({ path: '/ws/v1/t2a_v2', fault: true }, { exactly: 1 })).status).toBe(200);
  });

  it('a whole stream: its last event (the final one, whole audio as hex) is kept without audio', async () => {
    const r = await t2a(emu.speechUrl, req({ stream: true }, 'Short stream.'));
    expect(r.status).toBe(200);
    const entry = await newest();
    expect(entry.stream.last_event).toMatchObject({ data: { audio: { chars: expect.any(Number) }, status: 2 }, base_resp: { status_code: 0 } });
    expect(entry.stream.bytes).toBe(Buffer.byteLength(r.text));
    expect(entry.fault).toBeUndefined();
  });
});

describe('listener and matching', () => {
  it('every entry names its listener; verify and the journal select by listener (the backup got exactly one call)', async () => {
    await t2a(emu.speechUrl, req({}, 'On the primary.'));
    await t2a(emu.speechBackupUrl, req({}, 'On the backup.'));
    await call(`${emu.platformUrl}/v1/text-to-speech`, { json: { voice_id: 'female_bright', generate_text: 'Hi.' }, headers: { 'x-api-key': 'witness-p' } });

    const entries = (await ctl.journal()).body.entries;
    expect(entries.map((e: any) => [e.service, e.listener])).toEqual([
      ['platform', 'platform'],
      ['speech', 'speech-backup'],
      ['speech', 'speech'],
    ]);
    expect((await verify({ listener: 'speech-backup' }, { exactly: 1 })).body).toMatchObject({ ok: true, count: 1 });
    const miss = await verify({ listener: 'speech-backup', body: { text: 'On the primary.' } });
    expect(miss.status).toBe(409);
    expect(miss.body.near_misses.map((n: any) => n.differences)).toEqual(
      expect.arrayContaining([['listener: expected speech-backup, got speech'], ['body.text: expected "On the primary.", got "On the backup."']]),
    );
    expect((await ctl.journal({ listener: 'speech-backup' })).body.entries.map((e: any) => e.request.body.text)).toEqual(['On the backup.']);
    // a fault rule for the backup alone
    await ctl.addFault({ service: 'speech-backup', fault: { code: 1002 } });
    await t2a(emu.speechBackupUrl, req({}, 'Backup down.'));
    expect((await verify({ listener: 'speech-backup', fault: true, code: 1002, body: { text: 'Backup down.' } }, { exactly: 1 })).status).toBe(200);
  });

  it('by headers (names case-insensitive; a credential compared redacted and never echoed) and by query', async () => {
    await t2a(emu.speechUrl, req(), { key: 'witness-secret-key', headers: { 'X-Request-Id': 'abc-1' }, query: '?GroupId=g42&tag=a' });
    expect((await verify({ headers: { 'x-request-id': 'abc-1' } }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ headers: { 'X-REQUEST-ID': 'abc-1', Authorization: 'Bearer witness-secret-key' } }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ query: { GroupId: 'g42' } }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ query: { GroupId: 'g42', tag: 'a' }, headers: { 'x-request-id': 'abc-1' } }, { exactly: 1 })).status).toBe(200);

    const miss = await verify({ headers: { 'x-request-id': 'abc-2', authorization: 'Bearer another-secret-key' }, query: { tag: 'b' } });
    expect(miss.status).toBe(409);
    const diff = miss.body.near_misses[0].differences as string[];
    expect(diff[0]).toBe('header x-request-id: expected "abc-2", got "abc-1"');
    expect(diff[1]).toMatch(/^header authorization: expected "Bearer anot…[0-9a-f]{6}", got "Bearer witn…[0-9a-f]{6}"$/);
    expect(diff[2]).toBe('query tag: expected "b", got "a"');
    expect(JSON.stringify(miss.body)).not.toMatch(/secret-key/);

    const listed = await ctl.journal({ header: 'X-Request-Id:abc-1', query: 'GroupId:g42' });
    expect(listed.body.entries).toHaveLength(1);
    expect((await ctl.journal({ header: 'x-request-id:nope' })).body.entries).toHaveLength(0);
    const bad = await ctl.journal({ header: 'no-colon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/header.*name:value/);
  });

  it('a credential in the query is never kept, given once or repeated; verify matches it redacted', async () => {
    const pc = control(emu.platformUrl);
    const long = 'q'.repeat(300);
    await call(`${emu.platformUrl}/v1/voices?api_key=query-secret-one&api_key=query-secret-two&lang=en&long=${long}`);
    const entry = (await pc.journal({ limit: 1 })).body.entries[0];
    expect(entry.request.query.api_key).toEqual([expect.stringMatching(/^quer…[0-9a-f]{6}$/), expect.stringMatching(/^quer…[0-9a-f]{6}$/)]);
    expect(JSON.stringify(entry)).not.toMatch(/query-secret/);
    const found = await pc.call('POST', '/verify', {
      request: { query: { api_key: ['query-secret-one', 'query-secret-two'], lang: 'en', long } },
      exactly: 1,
    });
    expect(found.status).toBe(200);
    const miss = await pc.call('POST', '/verify', { request: { query: { api_key: ['query-secret-one', 'query-secret-six'] } } });
    expect(miss.status).toBe(409);
    expect(JSON.stringify(miss.body)).not.toMatch(/query-secret/);
  });

  it('a body is matched against its summary: a long text by its start and length, a credential redacted and never echoed', async () => {
    const long = `Long ${'y'.repeat(300)}`;
    await t2a(emu.speechUrl, { ...req({}, long), api_key: 'body-secret-key-1' });
    expect((await verify({ body: { text: long, api_key: 'body-secret-key-1' } }, { exactly: 1 })).status).toBe(200);
    const miss = await verify({ body: { api_key: 'body-secret-key-2' } });
    expect(miss.status).toBe(409);
    expect(miss.body.near_misses[0].differences[0]).toMatch(/^body\.api_key: expected "body…[0-9a-f]{6}", got "body…[0-9a-f]{6}"$/);
    expect(JSON.stringify(miss.body)).not.toMatch(/body-secret-key/);
  });

  it('header values are compared exactly; bad filters are refused naming the field', async () => {
    await t2a(emu.speechUrl, req(), { headers: { 'X-Request-Id': 'Abc-1' } });
    expect((await verify({ headers: { 'x-request-id': 'abc-1' } })).status).toBe(409);
    expect((await verify({ headers: { 'X-Request-ID': 'Abc-1' } }, { exactly: 1 })).status).toBe(200);
    for (const [query, field] of [
      [{ listener: 'backup' }, 'listener'],
      [{ status: 'abc' }, 'status'],
      [{ fault: 'yes' }, 'fault'],
      [{ since_ms: -1 }, 'since_ms'],
      [{ header: ':no-name' }, 'header'],
      [{ query: 'no-colon' }, 'query'],
      [{ since_ms: 20, until_ms: 10 }, 'since_ms'],
    ] as const) {
      const r = await ctl.journal(query as Record<string, string>);
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(r.body.error.message).toMatch(new RegExp(`field ${field}:`));
    }
    const noColon = await ctl.journal({ header: 'authorization Bearer filter-secret-key' });
    expect(noColon.body.error.message).toBe('journal query field header: expected name:value, got no colon');
    for (const [request, field] of [
      [{ listener: 'backup' }, 'request.listener'],
      [{ headers: { 'x-request-id': 1 } }, 'request.headers.x-request-id'],
      [{ headers: 'x-request-id:1' }, 'request.headers'],
      [{ query: { tag: { a: 1 } } }, 'request.query.tag'],
      [{ fault: 'yes' }, 'request.fault'],
      [{ until_ms: 'soon' }, 'request.until_ms'],
    ] as const) {
      const r = await verify(request);
      expect(r.status, JSON.stringify(request)).toBe(400);
      expect(r.body.error.message).toMatch(new RegExp(`field ${field.replace(/\./g, '\\.')}:`));
    }
  });

  it('by a window on the emulator clock and by fault', async () => {
    await ctl.freeze(true);
    const t0 = (await ctl.clock()).body.now_ms as number;
    await t2a(emu.speechUrl, req({}, 'Early.'));
    await ctl.advance(10_000);
    await t2a(emu.speechUrl, req({}, 'Late.'), { headers: { 'X-Emulator-Fault': 'code=1002' } });
    await ctl.freeze(false);

    expect((await verify({ since_ms: t0 + 5_000, body: { text: 'Late.' } }, { exactly: 1 })).status).toBe(200);
    expect((await verify({ until_ms: t0 + 5_000 }, { exactly: 1 })).body.count).toBe(1);
    const miss = await verify({ since_ms: t0 + 5_000, body: { text: 'Early.' } });
    expect(miss.body.near_misses.map((n: any) => n.differences)).toContainEqual([`at_ms: expected at or after ${t0 + 5_000}, got ${t0}`]);
    expect((await verify({ since_ms: 10, until_ms: 5 })).status).toBe(400);

    expect((await verify({ fault: true }, { exactly: 1 })).status).toBe(200);
    const noFault = await verify({ fault: false, body: { text: 'Late.' } });
    expect(noFault.body.near_misses[0].differences).toEqual(['fault: expected none, got one (header)']);
    expect((await ctl.journal({ fault: 'true' })).body.entries.map((e: any) => e.request.body.text)).toEqual(['Late.']);
    expect((await ctl.journal({ since_ms: t0 + 1, until_ms: t0 + 20_000 })).body.entries.map((e: any) => e.request.body.text)).toEqual(['Late.']);
  });
});

describe('socket contents', () => {
  it('the speech WebSocket: every text frame with its JSON, audio fields as their size', async () => {
    const r = await session(emu.speechUrl, [START, { event: 'task_continue', text: 'Frames kept.' }, { event: 'task_finish' }]);
    expect(r.messages.at(-1).event).toBe('task_finished');
    const entry = await newest({ path: '/ws/v1/t2a_v2' });
    const texts = entry.ws_frames.filter((f: any) => f.type === 'text');
    expect(texts.find((f: any) => f.dir === 'in' && f.event === 'task_continue').content).toEqual({ event: 'task_continue', text: 'Frames kept.' });
    expect(texts.find((f: any) => f.dir === 'in' && f.event === 'task_start').content).toMatchObject({ model: START.model });
    const audio = texts.find((f: any) => f.dir === 'out' && f.content?.data?.audio);
    expect(audio.content.data.audio).toEqual({ chars: expect.any(Number) });
    expect(texts.find((f: any) => f.event === 'task_finished').content).toMatchObject({ event: 'task_finished' });
    expect(JSON.stringify(entry.ws_frames)).not.toMatch(/[0-9a-f]{64}/);
  });

  it('the conversation socket: asr_final and the reply text are in the entry; audio frames by size', async () => {
    const spoken = 'Hello, what is the weather like tomorrow?';
    const { pcm } = await spokenPcm(emu.emulator, spoken);
    const c = await connect(wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream', 'witness-conv'));
    c.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
    await c.waitFor('session_created');
    await sendFrames(c.ws, pcm);
    await flush(c.ws);
    c.sendJson({ is_final: true });
    const done = await c.waitFor('done');
    c.ws.close();
    await c.closed;

    const pc = control(emu.platformUrl);
    const entry = (await pc.journal({ path: '/api/v1/audio/conversation/stream', limit: 1 })).body.entries[0];
    const frames = entry.ws_frames as any[];
    expect(frames.find((f) => f.event === 'asr_final').content).toMatchObject({ type: 'asr_final', asr_text: spoken });
    expect(frames.find((f) => f.event === 'done').content).toMatchObject({ type: 'done', reply_text: done.reply_text });
    expect(frames.find((f) => f.dir === 'in' && f.type === 'text').content).toMatchObject({ meta: { voice_id: 'support_agent' } });
    const binary = frames.filter((f) => f.type === 'binary');
    expect(binary.length).toBeGreaterThan(0);
    expect(binary.every((f) => f.content === undefined && f.size > 0)).toBe(true);
    expect(entry.ws_frames_total).toBeGreaterThanOrEqual(frames.length);
  });
});
