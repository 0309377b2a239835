import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Script } from 'node:vm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
// @ts-expect-error: a plain ES module of the build, without types
import { bundle } from '../../scripts/bundle.mjs';
import { loggerOptions } from '../../src/logger.js';
import { sourceStack } from '../../src/source-stack.js';

const ROOT = join(import.meta.dirname, '..', '..');
// Inside the project, so that packages, fixtures and package.json resolve from the bundle as from dist/.
const OUT = join(ROOT, 'test-output', `cli-${process.pid}`);

/** The built CLI (dist/main.js and the bundle it runs), started as `node dist/main.js`. */
describe('the built CLI', () => {
  let child: ChildProcess;
  let stderr = '';
  let speech = '';
  let platform = '';

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    await bundle(OUT);
    // Records the stack of the first response head: frames of the bundle, to see them mapped to the sources.
    writeFileSync(
      join(OUT, 'probe.mjs'),
      `import http from 'node:http';
const writeHead = http.ServerResponse.prototype.writeHead;
let seen = false;
http.ServerResponse.prototype.writeHead = function (...args) {
  if (!seen) { seen = true; process.stderr.write('probe ' + new Error('probe').stack + '\\n'); }
  return writeHead.apply(this, args);
};
`,
    );
    child = spawn(
      process.execPath,
      [
        '--import',
        join(OUT, 'probe.mjs'),
        join(OUT, 'main.js'),
        '--host',
        '127.0.0.1',
        '--speech-port',
        '0',
        '--speech-backup-port',
        '0',
        '--platform-port',
        '0',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
    );
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the CLI exited (${code}): ${stderr}`)));
      child.stdout!.on('data', (d: Buffer) => {
        out += d;
        speech = /speech synthesis\s+(http:\/\/\S+)/.exec(out)?.[1] ?? '';
        platform = /voice platform\s+(http:\/\/\S+)/.exec(out)?.[1] ?? '';
        if (speech && platform) resolve();
      });
    });
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(OUT, { recursive: true, force: true });
  });

  it('leaves out of the bundle what a start does not run (they load from node_modules on first use)', () => {
    // The files the bundle holds, as its source map lists them (the bundle itself is minified: no path comments).
    const code = (JSON.parse(readFileSync(join(OUT, 'emulator.cjs.map'), 'utf8')) as { sources: string[] }).sources.join('\n');
    expect(code).toContain('node_modules/fastify/lib/reply.js');
    // Fastify's default schema compilers: the apps give theirs.
    expect(code).not.toContain('node_modules/ajv/');
    expect(code).not.toContain('node_modules/fast-json-stringify/index.js');
    // The MP3 encoders.
    expect(code).not.toContain('node_modules/wasm-media-encoders/');
    expect(code).not.toContain('node_modules/@breezystack/lamejs/');
    // Only the zod the schemas use (`import * as z from 'zod'`): no other locale than English.
    expect(code).not.toMatch(/node_modules\/zod\/v4\/locales\/(?!en\.js|index\.js)/);
  });

  it('runs from the code cache written by the build', () => {
    const file = join(OUT, 'emulator.cjs');
    const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData: readFileSync(`${file}.cache`) });
    expect(script.cachedDataRejected).toBe(false);
  });

  it('answers the first MP3 and FLAC requests after the start (codecs loaded on first use)', async () => {
    for (const [format, head] of [
      ['mp3', 'fffb'],
      ['flac', '664c6143'],
    ] as const) {
      const r = await fetch(`${speech}/v1/t2a_v2`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'speech-02-hd',
          text: 'Hello there.',
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format, sample_rate: 32000 },
        }),
      });
      const body = (await r.json()) as { base_resp: { status_code: number }; data: { audio: string } };
      expect(body.base_resp.status_code).toBe(0);
      expect(body.data.audio.startsWith(head)).toBe(true);
    }
  });

  it('serves the documents and the metrics, on both services', async () => {
    for (const [base, doc] of [
      [speech, 'openapi/speech.json'],
      [platform, 'openapi/platform.json'],
      [speech, 'openapi/control.json'],
      [speech, 'asyncapi.json'],
    ] as const) {
      const r = await fetch(`${base}/_emulator/${doc}`);
      expect(r.status).toBe(200);
      const json = (await r.json()) as { paths?: object; channels?: object };
      expect(Object.keys(json.paths ?? json.channels ?? {}).length).toBeGreaterThan(0);
    }
    const metrics = await fetch(`${platform}/_emulator/metrics`);
    expect(await metrics.text()).toContain('emulator_requests_total');
  });

  it('opens the first WebSocket and streams audio on it', async () => {
    const events = await new Promise<string[]>((resolve, reject) => {
      const ws = new WebSocket(`${speech.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer k' } });
      const seen: string[] = [];
      ws.on('message', (m) => {
        const e = JSON.parse(String(m)) as { event: string; is_final?: boolean };
        seen.push(e.event);
        if (e.event === 'connected_success')
          ws.send(
            JSON.stringify({ event: 'task_start', model: 'speech-02-hd', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'mp3' } }),
          );
        if (e.event === 'task_started') ws.send(JSON.stringify({ event: 'task_continue', text: 'Hi.' }));
        if (e.is_final) ws.send(JSON.stringify({ event: 'task_finish' }));
        if (e.event === 'task_finished' || e.event === 'task_failed') ws.close();
      });
      ws.on('close', () => resolve(seen));
      ws.on('error', reject);
    });
    expect(events).toContain('task_continued');
    expect(events.at(-1)).toBe('task_finished');
  });

  it("formats stacks without the bundle's map: a stack nobody logs does not parse it", () => {
    const probe = /probe Error: probe\n(?:\s+at .*\n)+/.exec(stderr)?.[0] ?? '';
    expect(probe).toMatch(/emulator\.cjs:\d+:\d+/);
  });

  it('names the frames of the bundle by their sources in what the logger writes', async () => {
    const probe = /probe (Error: probe\n(?:\s+at .*\n)+)/.exec(stderr)?.[1] ?? '';
    const mapped = sourceStack(probe);
    expect(mapped).toMatch(/node_modules\/fastify\/lib\/reply\.js:\d+:\d+/);
    expect(mapped).not.toContain('emulator.cjs');
    // Through the logger's error serializer, as an unexpected failure is logged.
    let line = '';
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => ((line += String(chunk)), done()) });
    const err = new Error('probe');
    err.stack = probe;
    pino(loggerOptions('info'), sink).error({ err }, 'handler failed');
    await new Promise((r) => setImmediate(r));
    const logged = (JSON.parse(line) as { err: { stack: string } }).err.stack;
    expect(logged).toMatch(/node_modules\/fastify\/lib\/reply\.js:\d+:\d+/);
    expect(logged).not.toContain('emulator.cjs');
  });

  it('closes cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
