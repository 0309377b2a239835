import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { refusedUpgrade, wsUrl } from '../platform/conversation/conversation-helpers.js';
import { req, VOICE } from '../speech/helpers.js';

const PAGE = 'http://localhost:5173';
const EXPOSED = ['Trace-Id', 'X-Audio-Sample-Rate', 'X-Audio-Channels', 'X-Audio-Bit-Depth', 'X-Emulator-Fault-Ignored'];

function expectCors(res: Response, origin = '*'): void {
  expect(res.headers.get('access-control-allow-origin'), res.url).toBe(origin);
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',');
  for (const h of EXPOSED) expect(exposed, res.url).toContain(h);
}

function preflight(url: string, origin = PAGE, method = 'POST', headers = 'authorization,content-type,x-emulator-fault') {
  return fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
}

/** Opens a WebSocket with an Origin header; resolves 'open' or the refused upgrade's status. */
function openWith(url: string, origin: string): Promise<'open' | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { origin });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (_r, res) => resolve(res.statusCode ?? 0));
  });
}

describe('CORS, any origin (the default)', () => {
  const { emu, ctl } = emulatorForFile({ plane: 'speech' });

  it('a preflight on every listener answers 204 with origin, methods, headers and max-age, and is not journaled', async () => {
    for (const base of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      for (const path of ['/v1/t2a_v2', '/v1/text-to-speech', '/v1/files/upload', '/_emulator/journal', '/no/such/route']) {
        const res = await preflight(base + path);
        expect(res.status, base + path).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
        const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
        for (const h of ['authorization', 'x-api-key', 'content-type', 'idempotency-key', 'x-emulator-fault']) expect(allowed).toContain(h);
        expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      }
    }
    // A queued fault is not spent by a browser's preflight.
    await ctl.addFault({ path: '/v1/t2a_v2', fault: { code: 1002 } });
    await preflight(`${emu.speechUrl}/v1/t2a_v2`);
    const journal = (await ctl.journal()).body as { entries: { method: string }[] };
    expect(journal.entries.filter((e) => e.method === 'OPTIONS')).toEqual([]);
    expect(((await ctl.faults()).body as { rules: unknown[] }).rules).toHaveLength(1);
    await ctl.clearFaults();
  });

  it('answers and errors carry allow-origin and the exposed headers: success, 404, bad JSON, bad URL, fault, hijacked event stream', async () => {
    const h = { origin: PAGE, 'content-type': 'application/json', authorization: 'Bearer cors-key' };
    const ok = await fetch(`${emu.speechUrl}/v1/t2a_v2`, { method: 'POST', headers: h, body: JSON.stringify(req()) });
    expectCors(ok);
    expect(ok.headers.get('trace-id')).toBeTruthy();
    const stream = await fetch(`${emu.speechBackupUrl}/v1/t2a_v2`, { method: 'POST', headers: h, body: JSON.stringify(req({ stream: true })) });
    expect(stream.headers.get('content-type')).toMatch(/event-stream/);
    expectCors(stream);
    expect((await stream.text()).startsWith('data:')).toBe(true);
    const tts = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { origin: PAGE, 'content-type': 'application/json', 'x-api-key': 'cors-key' },
      body: JSON.stringify({ voice_id: 'female_bright', generate_text: 'Hi.' }),
    });
    expect(tts.status).toBe(200);
    expectCors(tts);
    expect(tts.headers.get('x-audio-sample-rate')).toBe('24000');
    for (const [url, init] of [
      [`${emu.speechUrl}/nowhere`, {}],
      [`${emu.platformUrl}/nowhere`, {}],
      [`${emu.speechUrl}/v1/t2a_v2`, { method: 'POST', body: '{not json' }],
      [`${emu.platformUrl}/v1/text-to-speech`, { method: 'POST', body: '{not json' }],
      [`${emu.speechUrl}/%zz`, {}],
      [`${emu.platformUrl}/%zz`, {}],
      [
        `${emu.speechUrl}/v1/t2a_v2`,
        {
          method: 'POST',
          body: JSON.stringify({ model: 'speech-02-hd', text: 'x', voice_setting: { voice_id: VOICE } }),
          headers: { 'x-emulator-fault': 'status=429, bogus' },
        },
      ],
      [`${emu.speechUrl}/_emulator/nothing`, {}],
    ] as [string, RequestInit][]) {
      // (the speech service answers its errors with HTTP 200 and base_resp)
      const res = await fetch(url, { ...init, headers: { ...h, ...(init.headers as Record<string, string>) } });
      expect(await res.text(), url).toMatch(/base_resp|error/);
      expectCors(res);
    }
  });

  it('WebSocket upgrades from any origin are accepted', async () => {
    expect(await openWith(wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'cors-ws'), 'https://anywhere.example.test')).toBe('open');
  });
});

describe('CORS restricted by corsOrigins', () => {
  const { emu } = emulatorForFile({ start: { corsOrigins: `${PAGE}, https://app.example.test`, controlToken: 'cors-token' } });

  it('a listed origin is echoed (with Vary: Origin); another gets no allow-origin', async () => {
    for (const base of [emu.speechUrl, emu.platformUrl]) {
      const yes = await preflight(`${base}/v1/t2a_v2`, 'https://app.example.test');
      expect(yes.status).toBe(204);
      expect(yes.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
      expect(yes.headers.get('vary')).toMatch(/Origin/i);
      const no = await preflight(`${base}/v1/t2a_v2`, 'https://evil.example.test');
      expect(no.headers.get('access-control-allow-origin')).toBeNull();
      const answer = await fetch(`${base}/nowhere`, { headers: { origin: PAGE } });
      expectCors(answer, PAGE);
      // the control plane refuses without its token, and still says so to the page
      const refused = await fetch(`${base}/_emulator/state`, { headers: { origin: PAGE } });
      expect(refused.status).toBe(401);
      expectCors(refused, PAGE);
    }
  });

  it('a WebSocket upgrade from a listed origin opens; another is refused before the upgrade, naming the origin', async () => {
    const url = wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'cors-ws');
    expect(await openWith(url, PAGE)).toBe('open');
    const refused = await refusedUpgrade(url, { origin: 'https://evil.example.test' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error_code: 10003, succeed: false });
    expect(refused.body.error_message).toContain('https://evil.example.test');
    // a client that sends no Origin (not a browser) is not affected
    const c = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      c.once('open', () => resolve());
      c.once('error', reject);
    });
    c.close();
  });

  it('a bad origin in the setting is refused at start naming it', async () => {
    await expect(startTestEmulator({ corsOrigins: 'localhost:5173' })).rejects.toThrow(/corsOrigins/);
  });
});
