/**
 * The server's own costs, each beside its anchor measured in the same run: a bare Fastify app of the
 * project's Fastify version (bench/bare-fastify.mjs), started and loaded the same way, interleaved.
 * Set BENCH_BEFORE=<checkout with a built dist/> to add a column for another build of the emulator
 * (BENCH_BEFORE_FLAGS: Node flags it starts with, e.g. --enable-source-maps for builds before the
 * loader switched source maps on itself).
 * Runnable alone: npx tsx bench/server.ts
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { freePort } from './free-port.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BARE = join(ROOT, 'bench', 'bare-fastify.mjs');
const KEY = { authorization: 'Bearer bench-key', 'content-type': 'application/json' };
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

interface Target {
  name: string;
  args: string[];
  env(port: number, platformPort: number): NodeJS.ProcessEnv;
}

function emulatorTarget(name: string, root: string, flags: string[]): Target {
  return {
    name,
    args: [...flags, join(root, 'dist', 'main.js')],
    env: (port, platformPort) => ({
      ...process.env,
      EMULATOR_HOST: '127.0.0.1',
      EMULATOR_SPEECH_PORT: String(port),
      EMULATOR_SPEECH_BACKUP_PORT: '0',
      EMULATOR_PLATFORM_PORT: String(platformPort),
      EMULATOR_SEED: 'bench',
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
    }),
  };
}
const bare: Target = { name: 'bare Fastify', args: [BARE], env: (port) => ({ ...process.env, PORT: String(port) }) };

function median(xs: number[]): number {
  // A run whose window was not measured (NaN) is left out rather than sorted among the others.
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function procStat(pid: number): { cpuMs: number; peakRssMb: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK, peakRssMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

interface Running {
  child: ChildProcess;
  port: number;
  platformPort: number;
  startMs: number;
  startCpuMs: number;
  stop(): Promise<void>;
}

async function start(t: Target): Promise<Running> {
  const port = await freePort();
  let platformPort = await freePort();
  while (platformPort === port) platformPort = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, t.args, { cwd: ROOT, env: t.env(port, platformPort), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const exit = new Promise<void>((r) => child.once('exit', () => r()));
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${t.name} exited: ${stderr.trim()}`);
    try {
      const r = await pool.request({ path: '/_emulator/health', method: 'GET' });
      await r.body.dump();
      if (r.statusCode === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const startMs = performance.now() - t0;
  const startCpuMs = procStat(child.pid!).cpuMs;
  await pool.close();
  return {
    child,
    port,
    platformPort,
    startMs,
    startCpuMs,
    stop: async () => {
      child.kill('SIGTERM');
      await exit;
    },
  };
}

/** A window of the error-rate load, in ms since the load began. */
interface LoadWindow {
  name: 'early' | 'warm';
  fromMs: number;
  toMs: number;
}

/**
 * Two windows of one continuous load: `early`, the first seconds after a start (both servers' code is
 * still being compiled: the emulator has more of it, so this window also measures its warm-up), and
 * `warm`, once the rate has settled (a few seconds of this load on this machine). A rate is a property of
 * the warm server; the early window is reported beside it.
 */
const ERROR_WINDOWS: LoadWindow[] = [
  { name: 'early', fromMs: 500, toMs: 2000 },
  { name: 'warm', fromMs: 4000, toMs: 6000 },
];

/**
 * Requests per second of `connections` loops sending the same invalid body, in each window, and the
 * server's CPU time per request counted in that window (less at the mercy of a shared machine than
 * the rate).
 */
async function errorRate(port: number, pid: number, connections = 10): Promise<Record<LoadWindow['name'], { rps: number; cpuUs: number }>> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections });
  const body = JSON.stringify({ model: 'speech-02-turbo', text: 42 });
  let done = 0;
  const t0 = performance.now();
  // The load goes on a little past the last mark, so every mark is taken while it runs.
  const end = t0 + Math.max(...ERROR_WINDOWS.map((w) => w.toMs)) + 250;
  const marks = new Map<number, { done: number; cpuMs: number; atMs: number }>();
  const timers = [...new Set(ERROR_WINDOWS.flatMap((w) => [w.fromMs, w.toMs]))].map((at) =>
    setTimeout(() => marks.set(at, { done, cpuMs: procStat(pid).cpuMs, atMs: performance.now() }), at),
  );
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const r = await pool.request({ path: '/v1/t2a_v2', method: 'POST', headers: KEY, body });
        await r.body.dump();
        done++;
      }
    }),
  );
  for (const t of timers) clearTimeout(t);
  await pool.close();
  const out = {} as Record<LoadWindow['name'], { rps: number; cpuUs: number }>;
  for (const w of ERROR_WINDOWS) {
    const a = marks.get(w.fromMs);
    const b = marks.get(w.toMs);
    // Timers fire late on a loaded machine: the rate is over the time that really passed between the marks.
    out[w.name] =
      a && b
        ? { rps: (b.done - a.done) / ((b.atMs - a.atMs) / 1000), cpuUs: ((b.cpuMs - a.cpuMs) * 1000) / Math.max(1, b.done - a.done) }
        : { rps: NaN, cpuUs: NaN };
  }
  return out;
}

/** 50 clients, each alternating an MP3 T2A request and an invalid one, for `ms`: completed req/s. */
async function underLoad(port: number, ms: number, clients = 50): Promise<number> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: clients });
  const good = JSON.stringify({
    model: 'speech-02-turbo',
    text: 'A short sentence to say, then another one after it. '.repeat(3),
    voice_setting: { voice_id: 'male-qn-qingse' },
    audio_setting: { format: 'mp3', sample_rate: 32000 },
  });
  const bad = JSON.stringify({ model: 'speech-02-turbo', text: 42 });
  let done = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      let n = i;
      while (performance.now() < end) {
        const r = await pool.request({ path: '/v1/t2a_v2', method: 'POST', headers: KEY, body: n++ % 2 ? bad : good });
        await r.body.dump();
        done++;
      }
    }),
  );
  await pool.close();
  return done / (ms / 1000);
}

/** Streams one multipart upload of `bytes` (video scene) and returns the RSS growth in MB. */
async function uploadGrowth(t: Target, bytes: number): Promise<number> {
  const run = await start(t);
  try {
    const port = t === bare ? run.port : run.platformPort;
    await new Promise((r) => setTimeout(r, 300));
    const before = procStat(run.child.pid!).rssMb;
    const boundary = 'benchboundary';
    const head = Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="scene"\r\n\r\nvideo\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.mp4"\r\ncontent-type: video/mp4\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1 << 20, 7);
    async function* body() {
      yield head;
      for (let sent = 0; sent < bytes; sent += chunk.length) yield sent + chunk.length <= bytes ? chunk : chunk.subarray(0, bytes - sent);
      yield tail;
    }
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
    const r = await pool.request({
      path: '/v1/files/upload',
      method: 'POST',
      headers: { 'x-api-key': 'bench-key', 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Readable.from(body()),
    });
    const text = await r.body.text();
    await pool.close();
    if (r.statusCode !== 200 || /"succeed":false/.test(text)) throw new Error(`upload failed: ${r.statusCode} ${text.slice(0, 200)}`);
    return procStat(run.child.pid!).peakRssMb - before;
  } finally {
    await run.stop();
  }
}

const r1 = (x: number) => Math.round(x * 10) / 10;
/** How long the 50 clients load each server (BENCH_LOAD_S, 60 s by default: the load the memory goal is stated for). */
const LOAD_MS = Number(process.env.BENCH_LOAD_S ?? 60) * 1000;

/**
 * BENCH_ONLY=start,errors,load,upload runs only the named measures (all by default); BENCH_RUNS sets the
 * number of interleaved starts; BENCH_LOAD_S the length of the memory load.
 */
export async function benchServer(opts: { runs?: number; only?: string[] } = {}): Promise<Record<string, unknown>> {
  const runs = opts.runs ?? Number(process.env.BENCH_RUNS ?? 5);
  const only = new Set(opts.only ?? (process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',') : ['start', 'errors', 'load', 'upload']));
  const targets = [
    emulatorTarget('speech-emulator', ROOT, []),
    ...(process.env.BENCH_BEFORE
      ? [emulatorTarget('before', process.env.BENCH_BEFORE, (process.env.BENCH_BEFORE_FLAGS ?? '').split(' ').filter(Boolean))]
      : []),
    bare,
  ];
  const load0 = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const starts = new Map(targets.map((t) => [t.name, { wall: [] as number[], cpu: [] as number[] }]));
  const errors = new Map(targets.map((t) => [t.name, { early: [] as number[], warm: [] as number[] }]));
  const errorCpu = new Map(targets.map((t) => [t.name, { early: [] as number[], warm: [] as number[] }]));
  for (let i = 0; i <= runs && (only.has('start') || only.has('errors')); i++) {
    for (const t of targets) {
      const run = await start(t);
      if (i > 0) {
        // The first round warms the file-system cache and is not counted.
        starts.get(t.name)!.wall.push(run.startMs);
        starts.get(t.name)!.cpu.push(run.startCpuMs);
        if (only.has('errors')) {
          const e = await errorRate(run.port, run.child.pid!);
          for (const w of ERROR_WINDOWS) {
            errors.get(t.name)![w.name].push(e[w.name].rps);
            errorCpu.get(t.name)![w.name].push(e[w.name].cpuUs);
          }
        }
      }
      await run.stop();
    }
  }
  // Idle RSS is read once the start has settled (1 s after healthy, before any request of the load);
  // peak RSS is the process's high-water mark (VmHWM) at the end of the load, so it covers the start too.
  const loads = new Map<string, { rps: number; idleRssMb: number; peakRssMb: number; endRssMb: number }>();
  for (const t of targets.filter(() => only.has('load'))) {
    const run = await start(t);
    await new Promise((r) => setTimeout(r, 1000));
    const idleRssMb = procStat(run.child.pid!).rssMb;
    const rps = await underLoad(run.port, LOAD_MS);
    const { peakRssMb, rssMb: endRssMb } = procStat(run.child.pid!);
    loads.set(t.name, { rps, idleRssMb, peakRssMb, endRssMb });
    await run.stop();
  }
  const uploads = new Map<string, number>();
  for (const t of targets.filter(() => only.has('upload'))) uploads.set(t.name, await uploadGrowth(t, 200_000_000));
  const load1 = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

  const anchor = bare.name;
  const rows: string[][] = [];
  const startOf = (n: string) => median(starts.get(n)!.wall);
  const cpuOf = (n: string) => median(starts.get(n)!.cpu);
  const errOf = (n: string, w: LoadWindow['name']) => median(errors.get(n)![w]);
  const errCpuOf = (n: string, w: LoadWindow['name']) => median(errorCpu.get(n)![w]);
  for (const t of targets.filter((x) => x !== bare)) {
    const tag = targets.length > 2 ? ` (${t.name})` : '';
    if (only.has('start'))
      rows.push([
        `start to healthy${tag}`,
        `${Math.round(startOf(t.name))} ms (CPU ${Math.round(cpuOf(t.name))} ms)`,
        `${Math.round(startOf(anchor))} ms (CPU ${Math.round(cpuOf(anchor))} ms)`,
        `${(startOf(t.name) / startOf(anchor)).toFixed(2)} × (CPU ${(cpuOf(t.name) / cpuOf(anchor)).toFixed(2)} ×)`,
        '≤ 1.0 ×',
      ]);
    if (only.has('errors'))
      for (const w of ERROR_WINDOWS)
        rows.push([
          `invalid T2A request, req/s (server CPU per request), ${w.name === 'warm' ? 'warm' : 'first seconds after a start'}${tag}`,
          `${Math.round(errOf(t.name, w.name))} (${errCpuOf(t.name, w.name).toFixed(0)} µs)`,
          `${Math.round(errOf(anchor, w.name))} (${errCpuOf(anchor, w.name).toFixed(0)} µs)`,
          `${(errOf(t.name, w.name) / errOf(anchor, w.name)).toFixed(2)} × (CPU ${(errCpuOf(anchor, w.name) / errCpuOf(t.name, w.name)).toFixed(2)} ×)`,
          w.name === 'warm' ? '≥ 0.8 ×' : '— (reported)',
        ]);
    const l = loads.get(t.name);
    const a = loads.get(anchor);
    if (l && a)
      rows.push(
        [`idle RSS, before any request${tag}`, `${r1(l.idleRssMb)} MB`, `${r1(a.idleRssMb)} MB`, `${(l.idleRssMb / a.idleRssMb).toFixed(2)} ×`, '— (reported)'],
        [
          `peak RSS, 50 clients for ${LOAD_MS / 1000} s (MP3 T2A + errors; RSS at the end)${tag}`,
          `${r1(l.peakRssMb)} MB at ${Math.round(l.rps)} req/s (${r1(l.endRssMb)} MB)`,
          `${r1(a.peakRssMb)} MB at ${Math.round(a.rps)} req/s (${r1(a.endRssMb)} MB)`,
          `${(l.peakRssMb / a.peakRssMb).toFixed(2)} ×`,
          '< 150 MB, throughput not lower',
        ],
      );
    if (uploads.has(t.name))
      rows.push([
        `RSS growth, one 200 MB upload${tag}`,
        `+${r1(uploads.get(t.name)!)} MB`,
        `+${r1(uploads.get(anchor)!)} MB (body read and dropped)`,
        '—',
        '< 20 MB',
      ]);
  }
  const table = [
    '| measure | speech-emulator | bare Fastify (coercion off: it rejects the same body), same run | ratio | goal |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  console.log(
    `load average before ${load0}, after ${load1}; medians of ${runs} interleaved starts (error rate, one load of 10 connections per start: ${ERROR_WINDOWS.map((w) => `${w.name} ${w.fromMs / 1000}–${w.toMs / 1000} s`).join(', ')})\n${table}`,
  );
  return { loadBefore: load0, loadAfter: load1, table };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await benchServer();
