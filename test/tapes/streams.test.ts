import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control } from '../helpers/emulator.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { REAL_KEY, tapeDir } from './helpers.js';

const CHUNK = Buffer.alloc(64 * 1024, 0x55);

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const go = () => (res.off('drain', go), res.off('close', go), resolve());
    res.on('drain', go).on('close', go);
  });
}

/**
 * A stand-in for the real platform: `/v1/text-to-speech/stream` answers `total` bytes of chunked audio, written only
 * as fast as its reader takes them (it waits for `drain`). `sent` counts the bytes its reader took; `ended` says whether
 * it wrote them all, `closed` whether the connection was cut first.
 */
async function audioUpstream(total: number) {
  const state = { sent: 0, ended: false, closed: false };
  const server: Server = createServer(async (req, res: ServerResponse) => {
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) state.closed = true;
    });
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    while (state.sent < total && !res.destroyed) {
      state.sent += CHUNK.length;
      if (!res.write(CHUNK)) await drainOrClose(res);
    }
    if (!res.destroyed) res.end(() => (state.ended = true));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { state, url, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) };
}

const streamRequest = (emu: RunningEmulator, signal?: AbortSignal) =>
  fetch(`${emu.platformUrl}/v1/text-to-speech/stream`, {
    method: 'POST',
    headers: { 'x-api-key': REAL_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: 'any', generate_text: 'A long stream.' }),
    signal,
  });

const jsonTapes = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.'));

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('tapes: a recorded stream follows its client', () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('a slow client slows the upstream (nothing held whole); a client that leaves ends the upstream request and leaves no tape', async () => {
    const dir = tapeDir();
    const upstream = await audioUpstream(256 * 1024 * 1024);
    const emu = await startTestEmulator({ record: dir, upstreamPlatform: upstream.url });
    cleanup.push(
      () => rmSync(dir, { recursive: true, force: true }),
      upstream.close,
      () => emu.close(),
    );
    const abort = new AbortController();
    const res = await streamRequest(emu, abort.signal);
    expect(res.status).toBe(200);
    // The client reads nothing for a while: the emulator reads the upstream no faster than the client (bounded by the
    // connections' buffers, far below the 256 MB the upstream would send).
    await new Promise((r) => setTimeout(r, 1500));
    expect(upstream.state.sent).toBeLessThan(64 * 1024 * 1024);
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    await until(() => upstream.state.closed);
    expect(upstream.state.ended).toBe(false);
    await until(async () => (await emu.control.journal.list({ path: '/v1/text-to-speech/stream', limit: 1 }))[0]?.tape?.recorded === false);
    const [entry] = await control(emu.platformUrl)
      .journal({ limit: 1 })
      .then((r) => r.body.entries);
    expect(entry.tape).toMatchObject({ mode: 'forwarded', recorded: false, problem: 'the client left before the stream ended; no tape was written' });
    expect(jsonTapes(dir)).toEqual([]);
    await until(() => readdirSync(join(dir, 'files')).length === 0);
  }, 30_000);

  it('a write that fails while a long stream spills to disk breaks that stream, keeps the emulator serving, and leaves no tape', async () => {
    const dir = tapeDir();
    // Past the 1 MB the writer holds in memory: the rest goes to a temporary file, which cannot be opened.
    const upstream = await audioUpstream(3 * 1024 * 1024);
    const emu = await startTestEmulator({ record: dir, upstreamPlatform: upstream.url });
    cleanup.push(
      () => rmSync(dir, { recursive: true, force: true }),
      upstream.close,
      () => emu.close(),
    );
    rmSync(join(dir, 'files'), { recursive: true, force: true });
    writeFileSync(join(dir, 'files'), 'not a folder');
    const res = await streamRequest(emu);
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
    await until(async () => (await emu.control.journal.list({ path: '/v1/text-to-speech/stream', limit: 1 }))[0]?.tape?.recorded === false);
    const [entry] = await control(emu.platformUrl)
      .journal({ limit: 1 })
      .then((r) => r.body.entries);
    expect(entry.tape).toMatchObject({ mode: 'forwarded', recorded: false, problem: expect.stringMatching(/^the tape could not be written \(.*ENOTDIR/) });
    expect(jsonTapes(dir)).toEqual([]);
    // Still serving: the same stream again, once the folder is whole, is recorded.
    rmSync(join(dir, 'files'), { force: true });
    mkdirSync(join(dir, 'files'));
    upstream.state.sent = 0;
    const again = await streamRequest(emu);
    expect((await again.arrayBuffer()).byteLength).toBe(3 * 1024 * 1024);
    await until(() => jsonTapes(dir).length === 1);
  }, 30_000);
});

describe("tapes: a request body is bounded by its route's own limit", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it("a body over the route's limit gets the service's own 413, as without tapes; a client that leaves mid-body gets no 500", async () => {
    const dir = tapeDir();
    const upstream = await audioUpstream(1024);
    const plain = await startTestEmulator();
    const emu = await startTestEmulator({ record: dir, upstreamPlatform: upstream.url, upstreamSpeech: upstream.url });
    cleanup.push(
      () => rmSync(dir, { recursive: true, force: true }),
      upstream.close,
      () => emu.close(),
      () => plain.close(),
    );
    const big = JSON.stringify({ voice_id: 'any', generate_text: 'x'.repeat(2_000_000) });
    const send = (base: string, path: string, headers: Record<string, string>) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: big });
    for (const [path, headers, url] of [
      ['/v1/text-to-speech', { 'x-api-key': REAL_KEY }, 'platformUrl'],
      ['/v1/t2a_v2', { authorization: `Bearer ${REAL_KEY}` }, 'speechUrl'],
    ] as const) {
      const own = await send(plain[url], path, headers);
      const taped = await send(emu[url], path, headers);
      expect(taped.status, path).toBe(own.status);
      expect(withoutIds(await taped.json()), path).toEqual(withoutIds(await own.json()));
    }
    // Nothing was forwarded nor taped.
    expect(jsonTapes(dir)).toEqual([]);

    // A client that sends half its body and leaves.
    const { request } = await import('node:http');
    const url = new URL(`${emu.platformUrl}/v1/text-to-speech`);
    const half = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'x-api-key': REAL_KEY, 'content-type': 'application/json', 'content-length': '500000' },
    });
    half.on('error', () => undefined);
    half.write('{"voice_id": "any", "generate_text": "');
    half.write('y'.repeat(100_000));
    await new Promise((r) => setTimeout(r, 200));
    half.destroy();
    await until(
      async () =>
        (await emu.control.journal.list({ path: '/v1/text-to-speech', limit: 1 })).length > 0 &&
        (await emu.control.journal.list({ path: '/v1/text-to-speech', limit: 1 }))[0]!.status !== 413,
    );
    const [left] = await emu.control.journal.list({ path: '/v1/text-to-speech', limit: 1 });
    // The body that broke off, said so: not the service's internal error (10000) of an unexpected failure.
    expect(left!.status).not.toBe(500);
    expect((left as any).response.code).not.toBe(10000);
    expect((left as any).response.summary.error_message).toMatch(/the client left before its request body was read/);
    expect(jsonTapes(dir)).toEqual([]);
  }, 30_000);
});

/** An answer without the ids that differ between two emulators (trace and request ids). */
function withoutIds(value: any): any {
  return JSON.parse(JSON.stringify(value), (k, v) => (/trace_id|request_id/.test(k) ? undefined : v));
}
