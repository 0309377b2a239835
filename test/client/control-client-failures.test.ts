/**
 * The control client against servers that misbehave (made here, on real sockets): one that never
 * answers, one that trickles its body, one that answers HTML or `null` with 200, a gateway's error
 * page; and `hear()` against a real emulator. Every call ends by its deadline, and every failure is
 * a ControlClientError naming the URL and what came back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient, ControlClientError } from '../../src/client/index.js';
import { call, emulatorForFile } from '../helpers/emulator.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on a free loopback port answering every request with `handler`; its sockets are destroyed on close. */
async function serve(handler: Handler): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => handler(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Writes a 200 JSON answer one byte every 100 ms, forever (until the socket closes). */
const trickle: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  const timer = setInterval(() => res.write(' '), 100);
  res.on('close', () => clearInterval(timer));
};

const answer =
  (status: number, contentType: string, body: string): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };

/**
 * The error a call rejects with, and how long it took from the moment it was made (the call's deadline starts when it
 * is made: a clock started after it would see the deadline early whenever a busy machine delays the test).
 */
async function failure(call: () => Promise<unknown>): Promise<{ err: ControlClientError; ms: number }> {
  const t0 = performance.now();
  const err = await call().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ControlClientError);
  return { err: err as ControlClientError, ms: performance.now() - t0 };
}

describe('control client against servers that misbehave', () => {
  const servers: { close: () => Promise<void> }[] = [];
  const start = async (handler: Handler) => {
    const s = await serve(handler);
    servers.push(s);
    return s.url;
  };
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it('a server that never answers: each call ends at its own deadline, or the client default', async () => {
    const url = await start(() => {});
    const client = new ControlClient({ url, timeoutMs: 400 });
    const byDefault = await failure(() => client.health());
    expect(byDefault.ms).toBeGreaterThanOrEqual(350);
    expect(byDefault.ms).toBeLessThan(3000);
    expect(byDefault.err).toMatchObject({ status: 0, url: `${url}/_emulator/health`, request: 'GET /_emulator/health' });
    expect(byDefault.err.message).toBe(`GET ${url}/_emulator/health: no whole answer within 400 ms (waiting for an answer)`);
    const perCall = await failure(() => client.verify({ request: { path: '/v1/t2a_v2' } }, { timeoutMs: 150 }));
    expect(perCall.ms).toBeLessThan(2000);
    expect(perCall.err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/_emulator\/verify: no whole answer within 150 ms/);
  });

  it('waitUntilReady({ timeoutMs }) holds its deadline on a server that never answers or trickles', async () => {
    for (const handler of [() => {}, trickle]) {
      const url = await start(handler);
      // The client's own per-call deadline is long: the wait's deadline bounds each poll.
      const { err, ms } = await failure(() => new ControlClient({ url, timeoutMs: 60_000 }).waitUntilReady({ timeoutMs: 1500 }));
      expect(ms).toBeGreaterThanOrEqual(1400);
      expect(ms).toBeLessThan(4000);
      expect(err.message).toMatch(new RegExp(`^GET ${url}/_emulator/readyz: the emulator was not ready within 1500 ms; last: .*no whole answer`));
    }
  });

  it('a trickling body ends at the deadline, named as a body that did not end', async () => {
    const url = await start(trickle);
    const { err, ms } = await failure(() => new ControlClient({ url }).health({ timeoutMs: 700 }));
    expect(ms).toBeLessThan(3000);
    expect(err.message).toBe(`GET ${url}/_emulator/health: no whole answer within 700 ms (waiting for the body of a 200 answer)`);
  });

  it('an HTML 200 is not a bare SyntaxError: the error names the URL, the type and the start of the page', async () => {
    const url = await start(answer(200, 'text/html; charset=utf-8', '<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>'));
    const { err } = await failure(() => new ControlClient({ url }).health());
    expect(err).toMatchObject({ status: 200, url: `${url}/_emulator/health` });
    expect(err.message).toContain(`GET ${url}/_emulator/health: 200 expected the health answer`);
    expect(err.message).toContain('not JSON (text/html; charset=utf-8): "<!doctype html><html><body><h1>Welcome to nginx!');
    expect(err.message).toContain('is this the URL of an emulator?');
  });

  it('a 200 of another shape (null, an empty object) fails every method: a wrong URL never passes', async () => {
    const url = await start(answer(200, 'application/json', 'null'));
    const client = new ControlClient({ url });
    const verify = await failure(() => client.verify({ request: { path: '/v1/t2a_v2' }, exactly: 1 }));
    expect(verify.err.message).toBe(
      `POST ${url}/_emulator/verify: 200 expected the verification {ok: true, count, expected}, got "null" — is this the URL of an emulator?`,
    );
    for (const send of [
      () => client.reset(),
      () => client.clock.advance(1),
      () => client.journal.list(),
      () => client.faults.list(),
      () => client.state(),
      () => client.ready(),
    ]) {
      await failure(() => send());
    }
    const empty = new ControlClient({ url: await start(answer(200, 'application/json', '{}')) });
    for (const send of [
      () => empty.health(),
      () => empty.verify({ request: {} }),
      () => empty.accounts.get('k'),
      () => empty.fixtures.list(),
      () => empty.openApi('speech'),
    ]) {
      await failure(() => send());
    }
    // Audio and metrics are checked by their content type.
    await failure(() => empty.journal.answerAudio('x'));
    await failure(() => empty.metrics());
  });

  it('an error answer names what came back: a JSON error string, an HTML page, an empty body', async () => {
    const gateway = await start(answer(502, 'application/json', '{"error": "Bad gateway"}'));
    const a = await failure(() => new ControlClient({ url: gateway }).reset());
    expect(a.err).toMatchObject({ status: 502, detail: 'Bad gateway', body: { error: 'Bad gateway' } });
    expect(a.err.message).toBe(`POST ${gateway}/_emulator/reset: 502 Bad gateway`);
    const page = await start(answer(503, 'text/html', '<html><body>Service Unavailable</body></html>'));
    const b = await failure(() => new ControlClient({ url: page }).clock.read());
    expect(b.err.message).toBe(`GET ${page}/_emulator/clock: 503 503 answer that is not JSON: "<html><body>Service Unavailable</body></html>"`);
    const empty = await start(answer(500, 'text/plain', ''));
    expect((await failure(() => new ControlClient({ url: empty }).faults.clear())).err.detail).toBe('500 answer that is not JSON: an empty body');
  });

  it('no server at all: status 0 and the socket error', async () => {
    const gone = await serve(() => {});
    await gone.close();
    const { err } = await failure(() => new ControlClient({ url: gone.url }).health());
    expect(err).toMatchObject({ status: 0 });
    expect(err.message).toBe(`GET ${gone.url}/_emulator/health: no answer: ECONNREFUSED`);
  });

  it('a call is cancelled by its signal', async () => {
    const url = await start(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { err, ms } = await failure(() => new ControlClient({ url }).health({ signal: controller.signal }));
    expect(ms).toBeLessThan(2000);
    expect(err.message).toMatch(/cancelled while waiting for an answer$/);
  });
});

describe('control client: hear()', () => {
  const TOKEN = 'hear-client-token';
  const { emu } = emulatorForFile({ plane: 'speech', start: { controlToken: TOKEN } });
  let client: ControlClient;
  beforeAll(() => {
    client = new ControlClient({ url: emu.speechUrl, token: TOKEN });
  });
  const TEXT = 'The client hears this sentence whole.';

  async function synthesize(format: string) {
    const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format, sample_rate: 16000 } },
      headers: { authorization: 'Bearer hear-client-key' },
    });
    expect(r.body.base_resp.status_code).toBe(0);
    return { bytes: new Uint8Array(Buffer.from(r.body.data.audio, 'hex')), traceId: r.body.trace_id as string };
  }

  it('finds the synthesis in WAV and MP3 (told from their bytes) and in raw PCM (its type given)', async () => {
    for (const format of ['wav', 'mp3']) {
      const { bytes, traceId } = await synthesize(format);
      const heard = await client.hear(bytes);
      expect(heard.utterances).toHaveLength(1);
      expect(heard.utterances[0]).toMatchObject({ full_text: TEXT, complete: true, trace_id: traceId });
      expect(heard.text).toBe('The client hears this sentence whole');
      expect(heard.anomalies).toEqual([]);
    }
    const pcm = await synthesize('pcm');
    await expect(client.hear(pcm.bytes)).rejects.toThrow(/give its contentType \(e\.g\. audio\/pcm;rate=16000\)/);
    const cut = await client.hear(pcm.bytes.subarray(0, 16000 * 2 * 1.5), { contentType: 'audio/pcm;rate=16000' });
    expect(cut.utterances[0]).toMatchObject({ full_text: TEXT, complete: false });
    expect(cut.anomalies.map((a) => a.kind)).toContain('cut');
  });

  it('a refusal is a ControlClientError with the control plane message', async () => {
    const { err } = await failure(() => client.hear(new Uint8Array([1, 2, 3, 4]), { contentType: 'audio/wav' }));
    expect(err).toMatchObject({ status: 400, request: 'POST /_emulator/hear' });
    expect(err.message).toMatch(new RegExp(`^POST ${emu.speechUrl}/_emulator/hear: 400 `));
    const wav = (await synthesize('wav')).bytes;
    const anonymous = await failure(() => new ControlClient({ url: emu.speechUrl }).hear(wav));
    expect(anonymous.err.status).toBe(401);
  });
});
