/**
 * What persistence costs with a data dir of 1k, 10k and 100k records: the latency of one write at a
 * time (REST conversation sessions over HTTP), the longest stall it causes to everyone else, and the
 * time from start to healthy. Stalls are seen two ways, each beside the same measure when idle:
 * - the event loop: a WebSocket ping every ~2 ms on an open speech socket, answered by the socket
 *   library on the loop with no persistence in its way, while the lone writes run;
 *   The same stall in CPU time, which a loaded machine does not lengthen: bench/loop-probe.mjs, loaded
 *   into the emulator, reports the main thread's longest busy stretch between two ticks of a 1 ms timer;
 * - another client's answers: `GET /_emulator/health` every ~2 ms during a second run of the writes.
 *   With the JSON snapshot every answer waits for the changes made so far to be on disk, so this ping
 *   waits for the snapshot too (and makes the next one), as any other client's request would.
 *
 * The emulator runs as a child process from a built checkout (`dist/main.js`), so the same bench
 * measures another build: BENCH_BEFORE=<checkout with a built dist/> adds a column. The data dir is
 * seeded with a `state.json` in snapshot format version 1 (src/core/snapshot-schema.ts), written here
 * directly: seeding 100k records over HTTP would rewrite the whole snapshot 100k times. A build that
 * keeps its state elsewhere migrates that file on its first start: each data dir is started twice, the
 * first start (which migrates, if the build does) reported apart from the second.
 *
 * BENCH_PERSIST_SIZES=1000,10000 runs only those sizes; BENCH_PERSIST_WRITES sets the writes measured.
 * Runnable alone: npx tsx bench/persistence.ts
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { dirBytes, keyOf, KEYS, ROLE, seedSnapshot, storeKind } from './persistence-data.js';
import { freePort } from './free-port.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROBE = pathToFileURL(join(ROOT, 'bench', 'loop-probe.mjs')).href;
const PING_EVERY_MS = 2;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** CPU time (user + system) of a process so far: less at the mercy of a shared machine than wall time. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
}

interface Build {
  name: string;
  root: string;
  flags: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantiles(xs: number[]): { median: number; worst: number } {
  const s = [...xs].sort((a, b) => a - b);
  const median = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { median, worst: s[s.length - 1] ?? NaN };
}

interface Running {
  startMs: number;
  port: number;
  pid: number;
  speech: Pool;
  platform: Pool;
  stop(): Promise<void>;
}

/** Starts a build on a data dir and waits until it answers healthy; the time is from spawn to healthy. */
async function start(build: Build, dataDir: string, probeFile: string): Promise<Running> {
  const port = await freePort();
  let platformPort = await freePort();
  while (platformPort === port) platformPort = await freePort();
  const env = {
    ...process.env,
    EMULATOR_HOST: '127.0.0.1',
    EMULATOR_SPEECH_PORT: String(port),
    EMULATOR_SPEECH_BACKUP_PORT: '0',
    EMULATOR_PLATFORM_PORT: String(platformPort),
    EMULATOR_DATA_DIR: dataDir,
    LOOP_PROBE_FILE: probeFile,
    EMULATOR_SEED: 'bench',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'production',
  };
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', PROBE, ...build.flags, join(build.root, 'dist', 'main.js')], {
    cwd: build.root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const exit = new Promise<void>((r) => child.once('exit', () => r()));
  const speech = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${build.name} exited: ${stderr.trim().split('\n').slice(-3).join(' ')}`);
    try {
      const r = await speech.request({ path: '/_emulator/health', method: 'GET' });
      await r.body.dump();
      if (r.statusCode === 200) break;
    } catch {
      /* not listening yet */
    }
    await sleep(2);
  }
  const startMs = performance.now() - t0;
  const platform = new Pool(`http://127.0.0.1:${platformPort}`, { connections: 1 });
  return {
    startMs,
    port,
    pid: child.pid!,
    speech,
    platform,
    stop: async () => {
      await Promise.all([speech.close(), platform.close()]);
      child.kill('SIGTERM');
      await exit;
    },
  };
}

/** Pings health, one at a time every PING_EVERY_MS, until `until` resolves: each answer's latency. */
async function pingUntil(pool: Pool, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const lat: number[] = [];
  while (!done) {
    const t0 = performance.now();
    const r = await pool.request({ path: '/_emulator/health', method: 'GET' });
    await r.body.dump();
    lat.push(performance.now() - t0);
    const wait = t0 + PING_EVERY_MS - performance.now();
    if (wait > 0) await sleep(wait);
  }
  return lat;
}

/** Opens a speech socket (the first seeded key), answered `connected_success`; pings go over it. */
async function openSocket(port: number): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws/v1/t2a_v2`, { headers: { authorization: `Bearer ${keyOf(0)}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('message', () => resolve());
    ws.once('error', reject);
    ws.once('close', (code) => reject(new Error(`speech socket closed ${code}`)));
  });
  return ws;
}

/** Pings over the socket, one at a time every PING_EVERY_MS, until `until` resolves: each pong's latency. */
async function wsPingUntil(ws: WebSocket, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const lat: number[] = [];
  while (!done) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      ws.once('pong', () => resolve());
      ws.ping((err?: Error) => err && reject(err));
    });
    lat.push(performance.now() - t0);
    const wait = t0 + PING_EVERY_MS - performance.now();
    if (wait > 0) await sleep(wait);
  }
  return lat;
}

/** Creates one REST conversation session and answers its latency; any refusal stops the bench. */
async function writeOne(pool: Pool, i: number): Promise<number> {
  const t0 = performance.now();
  const r = await pool.request({
    path: '/api/v1/audio/sessions',
    method: 'POST',
    headers: { 'x-api-key': keyOf(i % KEYS), 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: ROLE }),
  });
  const text = await r.body.text();
  const ms = performance.now() - t0;
  if (r.statusCode !== 200 || !text.includes('"succeed":true')) throw new Error(`write refused: ${r.statusCode} ${text.slice(0, 200)}`);
  return ms;
}

/**
 * Sessions the running emulator holds: the first account's (they are spread evenly) times the accounts,
 * which checks that the seed was read whole without asking the control plane for 100k records.
 */
async function recordsReadBack(pool: Pool): Promise<number> {
  const r = await pool.request({ path: '/_emulator/state?limit=1', method: 'GET' });
  const body = (await r.body.json()) as { accounts: { resources: Record<string, unknown[]> }[]; totals: { accounts: number } };
  return (body.accounts[0]?.resources.conversation_sessions ?? []).length * body.totals.accounts;
}

/** The longest busy stretch of the emulator's event loop (main-thread CPU ms) since the last call (bench/loop-probe.mjs). */
async function longestBusy(run: Running, probeFile: string): Promise<number> {
  writeFileSync(probeFile, '');
  process.kill(run.pid, 'SIGUSR2');
  for (let i = 0; i < 1000; i++) {
    const text = readFileSync(probeFile, 'utf8');
    if (text) return Number(text);
    await sleep(5);
  }
  throw new Error('the loop probe did not answer');
}

interface Figures {
  store: 'sqlite' | 'json';
  loaded: number;
  dataMb: number;
  firstStartMs: number;
  startMs: number;
  write: { median: number; worst: number };
  /** The emulator's CPU time per lone write. */
  writeCpuMs: number;
  /** The longest busy stretch of the event loop in main-thread CPU ms: during the lone writes, and idle. */
  busyCpu: number;
  idleCpu: number;
  idleLoop: { median: number; worst: number };
  busyLoop: { median: number; worst: number };
  idlePing: { median: number; worst: number };
  busyPing: { median: number; worst: number };
}

async function measure(build: Build, records: number, seed: string, writes: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-persist-'));
  try {
    writeFileSync(join(dir, 'state.json'), seed);
    // First start: reads the snapshot (and migrates it, for a build that keeps its state elsewhere).
    const probe = `${dir}.loop-probe`;
    const first = await start(build, dir, probe);
    await first.stop();
    const store = storeKind(dir);
    const run = await start(build, dir, probe);
    try {
      const loaded = await recordsReadBack(run.speech);
      const ws = await openSocket(run.port);
      await longestBusy(run, probe);
      const idleLoop = quantiles(await wsPingUntil(ws, sleep(2000)));
      const idlePing = quantiles(await pingUntil(run.speech, sleep(2000)));
      const idleCpu = await longestBusy(run, probe);
      // A few writes first, not counted: the write path's code is not optimized yet.
      for (let i = 0; i < 5; i++) await writeOne(run.platform, i);
      const writeAll = async (lat: number[]) => {
        for (let i = 0; i < writes; i++) lat.push(await writeOne(run.platform, i * 7));
      };
      const lat: number[] = [];
      await longestBusy(run, probe);
      const cpu0 = cpuMs(run.pid);
      const lone = writeAll(lat);
      const loop = await wsPingUntil(ws, lone);
      await lone;
      const writeCpuMs = (cpuMs(run.pid) - cpu0) / writes;
      const busyCpu = await longestBusy(run, probe);
      const shared = writeAll([]);
      const pings = await pingUntil(run.speech, shared);
      await shared;
      ws.close();
      return {
        store,
        loaded,
        dataMb: dirBytes(dir) / 1e6,
        firstStartMs: first.startMs,
        startMs: run.startMs,
        write: quantiles(lat),
        writeCpuMs,
        busyCpu,
        idleCpu,
        idleLoop,
        busyLoop: quantiles(loop),
        idlePing,
        busyPing: quantiles(pings),
      };
    } finally {
      await run.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.loop-probe`, { force: true });
  }
}

const ms = (x: number) => (x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`);

export async function benchPersistence(): Promise<Record<string, unknown>> {
  const sizes = (process.env.BENCH_PERSIST_SIZES ?? '1000,10000,100000').split(',').map(Number);
  const writes = Number(process.env.BENCH_PERSIST_WRITES ?? 50);
  const builds: Build[] = [{ name: 'this build', root: ROOT, flags: [] }];
  if (process.env.BENCH_BEFORE)
    builds.push({ name: 'before', root: process.env.BENCH_BEFORE, flags: (process.env.BENCH_BEFORE_FLAGS ?? '').split(' ').filter(Boolean) });
  for (const b of builds) if (!existsSync(join(b.root, 'dist', 'main.js'))) throw new Error(`${b.root}/dist/main.js is missing: run npm run build there first`);
  const load0 = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const figures = new Map<string, Map<number, Figures | string>>(builds.map((b) => [b.name, new Map()]));
  for (const records of sizes) {
    const seed = seedSnapshot(records);
    for (const b of builds) {
      // One build that cannot run a size (refused seed, crash) still lets the others report.
      const f = await measure(b, records, seed, writes).catch((err: Error) => `failed: ${err.message.slice(0, 160)}`);
      figures.get(b.name)!.set(records, f);
      console.log(
        `  ${b.name}, ${records} records: ${typeof f === 'string' ? f : `median write ${ms(f.write.median)}, worst stall ${ms(f.busyLoop.worst)} (${ms(f.busyCpu)} of CPU), worst health answer ${ms(f.busyPing.worst)}`}`,
      );
    }
  }
  const load1 = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

  const rows: string[] = [];
  const cell = (f: Figures | string | undefined, pick: (f: Figures) => string) => (f === undefined ? '—' : typeof f === 'string' ? f : pick(f));
  for (const records of sizes) {
    const row = (what: string, pick: (f: Figures) => string, goal = '') =>
      rows.push(`| ${records.toLocaleString('en')} | ${what} | ${builds.map((b) => cell(figures.get(b.name)!.get(records), pick)).join(' | ')} | ${goal} |`);
    const big = records >= 100_000;
    row('store, size of the whole data dir', (f) => `${f.store}, ${f.dataMb.toFixed(1)} MB (${f.loaded.toLocaleString('en')} records read back)`);
    row(
      `lone write, median / worst of ${writes} (emulator CPU per write)`,
      (f) => `${ms(f.write.median)} / ${ms(f.write.worst)} (${ms(f.writeCpuMs)})`,
      big ? 'median ≤ 10 ms' : '',
    );
    const worst = (busy: Figures['busyLoop'], idle: Figures['idleLoop']) => `${ms(busy.worst)} / ${ms(busy.median)} (${ms(idle.worst)} / ${ms(idle.median)})`;
    row(
      `event loop: WebSocket ping every ${PING_EVERY_MS} ms during the writes, worst / median (idle)`,
      (f) => worst(f.busyLoop, f.idleLoop),
      big ? 'no stall > 20 ms' : '',
    );
    row(
      'event loop: longest busy stretch in main-thread CPU time, during the writes (idle)',
      (f) => `${ms(f.busyCpu)} (${ms(f.idleCpu)})`,
      big ? 'no stall > 20 ms' : '',
    );
    row(`other answers: GET /_emulator/health every ${PING_EVERY_MS} ms during the writes, worst / median (idle)`, (f) => worst(f.busyPing, f.idlePing));
    // A build that migrated state.json on its first start: the migration is what that start took beyond the next one
    // (on a loaded machine the two starts swing more than a short migration takes).
    const migration = (f: Figures) => (f.firstStartMs > f.startMs ? `migration ≈ ${ms(f.firstStartMs - f.startMs)}` : 'migration within the noise');
    const starts = (f: Figures) =>
      f.store === 'sqlite' ? `${ms(f.firstStartMs)} (${migration(f)}) / ${ms(f.startMs)}` : `${ms(f.firstStartMs)} / ${ms(f.startMs)}`;
    row('start to healthy: first start (migration, if any) / next start', starts, big ? 'next start < 2 s' : '');
  }
  const table = [
    `| records | measure | ${builds.map((b) => (b.name === 'this build' ? 'this build' : `${b.name} (${b.root})`)).join(' | ')} | goal |`,
    `|---|---|${builds.map(() => '---|').join('')}---|`,
    ...rows,
  ].join('\n');
  console.log(`load average before ${load0}, after ${load1}\n${table}`);
  return { loadBefore: load0, loadAfter: load1, table };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await benchPersistence();
