import { Writable } from 'node:stream';
import pino from 'pino';
import pretty from 'pino-pretty';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEmulator, type RunningEmulator } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { loggerOptions, prettyOptions } from '../../src/logger.js';
import { control } from '../helpers/emulator.js';

interface Line {
  level: number;
  msg: string;
  listener?: string;
  id?: string;
  method?: string;
  path?: string;
  status?: number;
  code?: number;
  status_msg?: string;
  fault?: string;
  ms?: number;
  account?: string;
  chunks?: number;
  end?: string;
  event?: string;
  close_code?: number;
  closed_by?: string;
  frames_in?: number;
  frames_out?: number;
  reqId?: unknown;
}

// Every line twice, from one run: as JSON (what CI and Docker get) and in the pretty form (a terminal).
const json: string[] = [];
let prettyText = '';
let emu: RunningEmulator;
const KEY = 'logs-key';
const AUTH = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const T2A = { model: 'speech-02-turbo', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } };

beforeAll(async () => {
  const prettySink = new Writable({
    write(chunk, _enc, done) {
      prettyText += String(chunk);
      done();
    },
  });
  const logger = pino(
    loggerOptions('info'),
    pino.multistream([
      { level: 'info', stream: { write: (line: string) => void json.push(line) } },
      { level: 'info', stream: pretty({ ...prettyOptions(prettySink), colorize: false }) },
    ]),
  );
  emu = await runEmulator(configSchema.parse({ speechPort: 0, speechBackupPort: 0, platformPort: 0, seed: 't' }), logger);
});
afterAll(() => emu.close());

const lines = (): Line[] => json.map((l) => JSON.parse(l) as Line);

/** The lines of one request, once the last of them was written (its socket's close comes after the client saw it). */
async function linesOf(id: string, count = 1): Promise<Line[]> {
  for (let i = 0; i < 100; i++) {
    const found = lines().filter((l) => l.id === id);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  return lines().filter((l) => l.id === id);
}

/** The pretty lines that name a request id. */
async function prettyLinesOf(id: string, count = 1): Promise<string[]> {
  let found: string[] = [];
  for (let i = 0; i < 100 && found.length < count; i++) {
    found = prettyText.split('\n').filter((l) => l.includes(` ${id}`));
    if (found.length < count) await new Promise((r) => setTimeout(r, 10));
  }
  return found;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { ...AUTH, ...headers }, body: JSON.stringify(body) });
  const text = await res.text().catch(() => '');
  return { res, text, id: res.headers.get('x-emulator-request-id')! };
}

describe('one line per request, naming what failed', () => {
  it('a speech 1002 fault: HTTP 200, the line says code=1002 and the fault, one pretty line, no key, no query', async () => {
    const { res, id } = await post(`${emu.speechUrl}/v1/t2a_v2?api_key=${KEY}`, T2A, { 'x-emulator-fault': 'code=1002' });
    expect(res.status).toBe(200);
    const [line, ...more] = await linesOf(id);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: 30, listener: 'speech', method: 'POST', path: '/v1/t2a_v2', status: 200, code: 1002, fault: 'header:code=1002' });
    expect(line!.ms).toBeGreaterThan(0);
    expect(line!.reqId).toBeUndefined();
    expect(line!.status_msg).toMatch(/^\S/);
    expect(line!.msg).toBe(`POST /v1/t2a_v2 200 code=1002 ${JSON.stringify(line!.status_msg)} fault=header:code=1002 ${line!.ms}ms ${id}`);

    const prettyLines = await prettyLinesOf(id);
    expect(prettyLines).toHaveLength(1);
    expect(prettyLines[0]).toMatch(new RegExp(`INFO: speech +POST /v1/t2a_v2 200 code=1002 "[^"]+" fault=header:code=1002 [0-9.]+ms ${id} account=\\S*…\\w+$`));
    expect(prettyText).not.toContain(KEY);
    expect(json.join('')).not.toContain(KEY);
    expect(prettyText).not.toContain('api_key');
  });

  it("an account's standing stream faults are witnessed: the paced stream's entry has a fault of origin account, its line fault=account:…, and verify {fault: true} finds it", async () => {
    const ctl = control(emu.speechUrl);
    const key = 'standing-faults-key';
    expect((await ctl.putAccount(key, { stream_faults: { rtf: 50, ttfa_ms: 20 } })).status).toBe(200);
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...T2A, stream: true }),
    });
    await res.text();
    const id = res.headers.get('x-emulator-request-id')!;
    const [line] = await linesOf(id);
    expect(line!.fault).toBe('account:ttfa_ms=20,rtf=50');
    expect(line!.msg).toMatch(/ fault=account:ttfa_ms=20,rtf=50 /);
    const entry = (await ctl.call('GET', `/journal/${id}`)).body;
    expect(entry.fault).toMatchObject({ origin: 'account', rtf: 50, ttfa_ms: 20 });
    expect(entry.fault.first_audio_ms).toBeGreaterThanOrEqual(15);
    const found = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2', account: key, fault: true }, exactly: 1 });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const listed = (await ctl.journal({ fault: 'true', account: key })).body.entries;
    expect(listed.map((e: { id: string }) => e.id)).toEqual([id]);
    // A stream of another key is not marked.
    const plain = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, stream: true });
    expect((await linesOf(plain.id))[0]!.fault).toBeUndefined();
    await ctl.putAccount(key, { stream_faults: {} });
  });

  it('a speech error of the rules (2054 unknown voice) is info with its code', async () => {
    const { res, id } = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, voice_setting: { voice_id: 'no-such-voice' } });
    expect(res.status).toBe(200);
    expect(await linesOf(id)).toEqual([expect.objectContaining({ level: 30, status: 200, code: 2054 })]);
    const [line] = await linesOf(id);
    // The status message too, as the answer gives it, on one line.
    expect(line!.status_msg).toMatch(/no-such-voice|voice/);
    expect(line!.msg).toContain(`code=2054 ${JSON.stringify(line!.status_msg)}`);
    // A long message is bounded (160 characters, the last one an ellipsis).
    const long = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, model: 'm'.repeat(2000) });
    const [longLine] = await linesOf(long.id);
    expect(longLine!.code).toBe(2013);
    expect(longLine!.status_msg).toHaveLength(160);
    expect(longLine!.status_msg!.endsWith('…')).toBe(true);
    expect(longLine!.msg.length).toBeLessThan(300);
    expect(lines().find((l) => l.id === id)!.fault).toBeUndefined();
  });

  it('a platform error logs its error_code', async () => {
    const { text, id } = await post(`${emu.platformUrl}/v1/text-to-speech`, { voice_id: 'no-such-voice', generate_text: 'hi' }, { 'x-api-key': KEY });
    expect(JSON.parse(text).error_code).toBe(10001);
    const [line] = await linesOf(id);
    expect(line).toMatchObject({ level: 30, listener: 'platform', path: '/v1/text-to-speech', code: 10001 });
    expect(line!.msg).toContain(' code=10001 ');
  });

  it('a 5xx is a warning, and the backup listener is named', async () => {
    const { res, id } = await post(`${emu.speechBackupUrl}/v1/t2a_v2`, T2A, { 'x-emulator-fault': 'status=503' });
    expect(res.status).toBe(503);
    const [line] = await linesOf(id);
    expect(line).toMatchObject({ level: 40, listener: 'speech-backup', status: 503, fault: 'header:status=503' });
    expect((await prettyLinesOf(id))[0]).toMatch(/WARN: speech-backup POST \/v1\/t2a_v2 503 /);
  });

  it('a fault rule is named by its id', async () => {
    const ruleRes = await fetch(`${emu.platformUrl}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'platform', path: '/v1/text-to-speech', fault: { code: 10002 } }),
    });
    const { id } = await post(`${emu.platformUrl}/v1/text-to-speech`, { voice_id: 'female_bright', generate_text: 'hi' }, { 'x-api-key': KEY });
    const { id: ruleId } = (await ruleRes.json()) as { id: string };
    expect(ruleId).toMatch(/^fault_\d+$/);
    expect((await linesOf(id))[0]).toMatchObject({ code: 10002, fault: `${ruleId}:code=10002` });
  });

  it('a stream cut by cut_after_chunks is a warning that says after how many chunks', async () => {
    const { res, id } = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, stream: true }, { 'x-emulator-fault': 'cut_after_chunks=1' });
    expect(res.status).toBe(200);
    const [line] = await linesOf(id);
    expect(line).toMatchObject({ level: 40, status: 200, chunks: 1, end: 'cut', fault: 'header:cut_after_chunks=1' });
    expect(line!.msg).toContain(' stream cut after 1 chunk fault=header:cut_after_chunks=1 ');
  });

  it('the fault fields are named in the order of the directive, whichever stage took each one first', async () => {
    // delay_ms is taken when the request arrives, status only at admission: the line follows the directive.
    const { res, id } = await post(`${emu.speechUrl}/v1/t2a_v2`, T2A, { 'x-emulator-fault': 'delay_ms=1, status=503' });
    expect(res.status).toBe(503);
    const [line] = await linesOf(id);
    expect(line).toMatchObject({ status: 503, fault: 'header:status=503,delay_ms=1' });
  });

  it('a whole stream is one info line with its chunk count', async () => {
    const { text, id } = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, stream: true });
    const events = text.split('\n\n').filter((e) => e.startsWith('data:')).length;
    const [line] = await linesOf(id);
    expect(line).toMatchObject({ level: 30, status: 200, end: 'done', chunks: events });
    expect(line!.msg).toContain(` 200 ${events} chunks `);
  });

  it('control-plane requests are not logged and carry no request id', async () => {
    const before = json.length;
    const res = await fetch(`${emu.speechUrl}/_emulator/health`);
    expect(res.headers.get('x-emulator-request-id')).toBeNull();
    await new Promise((r) => setTimeout(r, 30));
    expect(json.slice(before).filter((l) => l.includes('/_emulator'))).toEqual([]);
  });
});

describe('one request id: log line, journal entry, response header', () => {
  it('the header of a JSON answer and of an event stream is the journal entry id and the log line id', async () => {
    const whole = await post(`${emu.speechUrl}/v1/t2a_v2`, T2A);
    const streamed = await post(`${emu.speechUrl}/v1/t2a_v2`, { ...T2A, stream: true });
    for (const { id } of [whole, streamed]) {
      expect(id).toMatch(/^req_\d{6}$/);
      const entry = (await (await fetch(`${emu.speechUrl}/_emulator/journal/${id}`)).json()) as { id: string };
      expect(entry.id).toBe(id);
      expect(await linesOf(id)).toHaveLength(1);
    }
    expect(streamed.res.headers.get('content-type')).toContain('text/event-stream');
  });
});

interface SocketRun {
  id: string;
  closeCode: number;
  received: number;
}

/** Opens a socket, sends `messages`, then waits for the server to close or closes itself after `closeAfter` messages. */
function runSocket(url: string, headers: Record<string, string>, messages: unknown[], closeAfter?: number): Promise<SocketRun> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    let id = '';
    let received = 0;
    ws.on('upgrade', (res) => (id = String(res.headers['x-emulator-request-id'])));
    ws.on('open', () => messages.forEach((m) => ws.send(JSON.stringify(m))));
    ws.on('message', () => {
      if (++received === closeAfter) ws.close(1000);
    });
    ws.on('close', (code) => resolve({ id, closeCode: code, received }));
    ws.on('error', reject);
  });
}

describe('sockets: a line when they open, their request line when they close', () => {
  it('speech socket closed by the client: close code, frames in and out, the id of its upgrade answer', async () => {
    const run = await runSocket(`${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, AUTH, [{ event: 'task_start', ...T2A }], 2);
    expect(run.id).toMatch(/^req_\d{6}$/);
    const [open, close] = await linesOf(run.id, 2);
    expect(open).toMatchObject({ level: 30, event: 'open', status: 101, method: 'GET', path: '/ws/v1/t2a_v2', listener: 'speech' });
    expect(close).toMatchObject({ level: 30, status: 101, close_code: 1000, closed_by: 'client', frames_in: 1, frames_out: run.received });
    expect(close!.msg).toMatch(new RegExp(`^GET /ws/v1/t2a_v2 101 closed 1000 by client in=1 out=${run.received} [0-9.]+ms ${run.id}$`));
    const prettyLines = await prettyLinesOf(run.id, 2);
    expect(prettyLines).toHaveLength(2);
    expect(prettyLines[0]).toContain(`GET /ws/v1/t2a_v2 101 open ${run.id}`);
    const entry = (await (await fetch(`${emu.speechUrl}/_emulator/journal/${run.id}`)).json()) as { path: string };
    expect(entry.path).toBe('/ws/v1/t2a_v2');
  });

  it('platform conversation socket closed by the server after its turn (key in the query, never logged)', async () => {
    const url = `${emu.platformUrl.replace(/^http/, 'ws')}/api/v1/audio/conversation/stream-text?api_key=${KEY}`;
    const run = await runSocket(url, {}, [{ voice_id: 'storyteller', audio_format: 'pcm16', text_input: 'Hello?' }]);
    expect(run.closeCode).toBe(1000);
    const [, close] = await linesOf(run.id, 2);
    expect(close).toMatchObject({
      listener: 'platform',
      path: '/api/v1/audio/conversation/stream-text',
      close_code: 1000,
      closed_by: 'server',
      frames_in: 1,
      frames_out: run.received,
    });
    expect(json.join('')).not.toContain(KEY);
  });

  it('a socket closed by close_ws is a warning that names the fault', async () => {
    const run = await runSocket(`${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { ...AUTH, 'x-emulator-fault': 'close_ws=4001' }, []);
    expect(run.closeCode).toBe(4001);
    const [, close] = await linesOf(run.id, 2);
    expect(close).toMatchObject({ level: 40, close_code: 4001, closed_by: 'fault', fault: 'header:close_ws=4001' });
  });

  it('a socket cut by cut_after_chunks is a warning (1006, no close frame)', async () => {
    const run = await runSocket(`${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { ...AUTH, 'x-emulator-fault': 'cut_after_chunks=1' }, [
      { event: 'task_start', ...T2A },
      { event: 'task_continue', text: 'A sentence long enough to make a few chunks of audio for the cut to fall into.' },
    ]);
    expect(run.closeCode).toBe(1006);
    const [, close] = await linesOf(run.id, 2);
    expect(close).toMatchObject({ level: 40, close_code: 1006, closed_by: 'fault', end: 'cut', fault: 'header:cut_after_chunks=1' });
  });
});

describe('the pretty form', () => {
  it('is one line per line written: every request and socket event on one line', async () => {
    await new Promise((r) => setTimeout(r, 50));
    const prettyLines = prettyText.split('\n').filter(Boolean);
    expect(prettyLines).toHaveLength(json.length);
    for (const l of lines().filter((x) => x.id)) expect(prettyLines.filter((p) => p.includes(` ${l.id} `) || p.endsWith(` ${l.id}`)).length).toBeGreaterThan(0);
  });
});

describe('every socket is logged the same way', () => {
  const sockets: [string, string, Record<string, string>][] = [
    ['speech', '/ws/v1/t2a_v2', AUTH],
    ['speech', '/ws/v1/t2a_v2_bidi', AUTH],
    ['platform', `/api/v1/audio/conversation/stream?api_key=${KEY}`, {}],
    ['platform', `/api/v1/audio/conversation/stream-text?api_key=${KEY}`, {}],
    ['platform', `/v1/speech-to-text/stream?api_key=${KEY}`, {}],
  ];
  it.each(sockets)('%s %s: open, then closed 1000 by the client', async (listener, path, headers) => {
    const base = listener === 'speech' ? emu.speechUrl : emu.platformUrl;
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, { headers });
    let id = '';
    ws.on('upgrade', (res) => (id = String(res.headers['x-emulator-request-id'])));
    await new Promise((r) => ws.on('open', r));
    await new Promise((r) => setTimeout(r, 50));
    ws.close(1000);
    await new Promise((r) => ws.on('close', r));
    const [open, close] = await linesOf(id, 2);
    const bare = path.split('?')[0];
    expect(open).toMatchObject({ event: 'open', listener, path: bare, status: 101 });
    expect(close).toMatchObject({ listener, path: bare, close_code: 1000, closed_by: 'client', frames_in: 0 });
    expect(close!.frames_out).toBeGreaterThanOrEqual(0);
  });
});

describe('what a shutdown ends', () => {
  it('a stream and a socket still open are info lines that say the shutdown ended them', async () => {
    const own: string[] = [];
    const logger = pino(loggerOptions('info'), { write: (line: string) => void own.push(line) });
    const local = await runEmulator(configSchema.parse({ speechPort: 0, speechBackupPort: 0, platformPort: 0, seed: 't' }), logger);
    let streamId = '';
    let socketId = '';
    try {
      // The first audio waits 5 s: the stream is open, its headers sent, when the emulator closes.
      const res = await fetch(`${local.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { ...AUTH, 'x-emulator-fault': 'ttfa_ms=5000' },
        body: JSON.stringify({ ...T2A, stream: true }),
      });
      streamId = res.headers.get('x-emulator-request-id')!;
      const body = res.text().catch(() => '');
      const ws = new WebSocket(`${local.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { headers: AUTH });
      ws.on('upgrade', (r) => (socketId = String(r.headers['x-emulator-request-id'])));
      const closed = new Promise((r) => ws.on('close', r));
      await new Promise((r) => ws.on('open', r));
      await local.close();
      await Promise.all([body, closed]);
    } finally {
      await local.close();
    }
    const parsed = own.map((l) => JSON.parse(l) as Line);
    expect(parsed.find((l) => l.id === streamId && l.end)).toMatchObject({ level: 30, end: 'shutdown', chunks: 0 });
    expect(parsed.find((l) => l.id === socketId && l.closed_by)).toMatchObject({ level: 30, close_code: 1001, closed_by: 'shutdown' });
    expect(parsed.filter((l) => l.level >= 40)).toEqual([]);
  });
});
