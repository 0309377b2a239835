// The head of both speech event streams (T2A and speech-to-text), as the wire carries it: the header
// names in their order, the reply's own headers (CORS) first, the fault fields the stream ignored last.
import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { req } from './helpers.js';
import { speak, STT_KEY, sttForm, type Spoken } from './stt/stt-helpers.js';

const { emu } = emulatorForFile({ plane: 'speech' });

/** The answer's status, its raw header lines in order (`date` left out) and its body. */
function rawAnswer(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; head: [string, string][]; text: string }> {
  return new Promise((resolve, reject) => {
    const r = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const head: [string, string][] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2)
        if (res.rawHeaders[i]!.toLowerCase() !== 'date') head.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, head, text }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** The head with the trace id masked (it differs on every request). */
const masked = (head: [string, string][]) => head.map(([name, value]): [string, string] => (name === 'Trace-Id' ? [name, '*'] : [name, value]));

const ORIGIN = 'http://app.example';
/** Header lines Node writes itself after the route's. */
const NODE_OWN = new Set(['Connection', 'Keep-Alive', 'Transfer-Encoding']);

describe('the event stream head', () => {
  let own: Spoken;
  beforeAll(async () => {
    own = await speak(emu.speechUrl, 'Hello, world.');
  });

  it('T2A: the reply headers, then text/event-stream, no-cache, no buffering, the trace id and the ignored fault fields', async () => {
    const body = Buffer.from(JSON.stringify(req({ stream: true, audio_setting: { format: 'pcm', sample_rate: 8000 } }, 'Hi')));
    const res = await rawAnswer(
      `${emu.speechUrl}/v1/t2a_v2`,
      { 'content-type': 'application/json', authorization: 'Bearer speech-head-key', origin: ORIGIN, 'x-emulator-fault': 'close_ws=4000' },
      body,
    );
    expect(res.status).toBe(200);
    const names = res.head.map(([name]) => name);
    expect(masked(res.head.slice(names.indexOf('content-type'), names.indexOf('content-type') + 5))).toEqual([
      ['content-type', 'text/event-stream'],
      ['cache-control', 'no-cache'],
      ['x-accel-buffering', 'no'],
      ['Trace-Id', '*'],
      ['x-emulator-fault-ignored', 'close_ws'],
    ]);
    // After them only what Node adds itself.
    expect(names.slice(names.indexOf('content-type') + 5).every((n) => NODE_OWN.has(n))).toBe(true);
    // What the hooks set before (CORS) comes first.
    expect(names.indexOf('access-control-allow-origin')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('access-control-allow-origin')).toBeLessThan(names.indexOf('content-type'));
    expect(res.text.startsWith('data: ')).toBe(true);
  });

  it('speech-to-text: the same head with its own content type (with a charset)', async () => {
    const form = new Response(sttForm({ fields: { stream: 'true' }, files: [{ bytes: own.wav }] }));
    const res = await rawAnswer(
      `${emu.speechUrl}/v1/speech_to_text`,
      { 'content-type': form.headers.get('content-type')!, authorization: `Bearer ${STT_KEY}`, origin: ORIGIN, 'x-emulator-fault': 'close_ws=4000' },
      Buffer.from(await form.arrayBuffer()),
    );
    expect(res.status).toBe(200);
    const names = res.head.map(([name]) => name);
    expect(masked(res.head.slice(names.indexOf('content-type'), names.indexOf('content-type') + 5))).toEqual([
      ['content-type', 'text/event-stream; charset=utf-8'],
      ['cache-control', 'no-cache'],
      ['x-accel-buffering', 'no'],
      ['Trace-Id', '*'],
      ['x-emulator-fault-ignored', 'close_ws'],
    ]);
    expect(names.slice(names.indexOf('content-type') + 5).every((n) => NODE_OWN.has(n))).toBe(true);
    expect(names.indexOf('access-control-allow-origin')).toBeLessThan(names.indexOf('content-type'));
    expect(res.text).toContain('"finish":true');
  });
});
