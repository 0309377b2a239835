/**
 * Memory while recording a long socket (docs/tapes.md): a recording emulator in its own process, between a client and
 * an upstream emulator in another, carries a 10-minute speech socket (the upstream synthesizes as fast as it can, so
 * the run takes far less than 10 minutes: what counts is the length of the recorded timeline, thousands of frames).
 * The recorder's RSS is read at 1, 5 and 10 minutes of audio received: bounded means flat, not growing with the length.
 * Its anchor, read at the same moments of the same run: the upstream's RSS, serving the same socket without tapes.
 * Each is read twice: as it is, and after a full collection (bench/gc-on-signal.mjs), which is what a process holds
 * apart from the garbage it has not collected yet (a fast stream makes much of it).
 * Runnable alone: npx tsx bench/tapes-memory.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

const ROOT = join(import.meta.dirname, '..');
/** PCM at 32 kHz: each event carries at most 12 KiB (0.19 s), so 10 minutes is over 3,000 events. */
const SAMPLE_RATE = 32_000;
const MARKS_MIN = [1, 5, 10];
const SENTENCE = 'The quick brown fox jumps over the lazy dog while the tape keeps every frame of it. ';

/** An emulator in its own process (the CLI) on free ports: its listeners' URLs once it printed them. */
export function spawnEmulator(args: string[], nodeArgs: string[] = []): Promise<{ speechUrl: string; child: ChildProcess }> {
  const all = [
    ...nodeArgs,
    '--import',
    'tsx',
    'src/main.ts',
    '--speech-port',
    '0',
    '--speech-backup-port',
    '0',
    '--platform-port',
    '0',
    '--log-level',
    'silent',
    ...args,
  ];
  const child = spawn(process.execPath, all, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const url = /speech synthesis\s+(http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ speechUrl: url, child });
    });
    child.once('exit', (code) => reject(new Error(`an emulator exited (${code}): ${out}`)));
  });
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 102.4) / 10;
}

/** Processes started with this collect their garbage on SIGUSR2. */
const GC_ON_SIGNAL = ['--expose-gc', '--import', './bench/gc-on-signal.mjs'];

/** RSS as it is, then after a full collection (the signal is handled within a few turns of its loop). */
interface Memory {
  rss: number;
  after_gc: number;
}

async function memoryOf(pid: number): Promise<Memory> {
  const rss = rssMb(pid);
  process.kill(pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 150));
  return { rss, after_gc: rssMb(pid) };
}

/** Speaks through the recorder until `minutes` of audio arrived, a piece at a time; the RSS at each mark. */
function longSocket(
  recorderUrl: string,
  pids: { recorder: number; upstream: number },
  minutes: number,
): Promise<{ events: number; marks: Record<string, Memory>; anchor: Record<string, Memory>; seconds: number }> {
  const ws = new WebSocket(`${recorderUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer bench-key' } });
  const started = performance.now();
  const reads: Promise<void>[] = [];
  const marks: Record<string, Memory> = {};
  const anchor: Record<string, Memory> = {};
  const mark = (name: string) =>
    reads.push(
      Promise.all([memoryOf(pids.recorder), memoryOf(pids.upstream)]).then(([r, u]) => {
        marks[name] = r;
        anchor[name] = u;
      }),
    );
  mark('start');
  let audioBytes = 0;
  let events = 0;
  let finishing = false;
  const seen = new Set<number>();
  const piece = () => ws.send(JSON.stringify({ event: 'task_continue', text: SENTENCE.repeat(20) }));
  return new Promise((resolve, reject) => {
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          event: 'task_start',
          model: 'speech-2.8-turbo',
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format: 'pcm', sample_rate: SAMPLE_RATE },
        }),
      ),
    );
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as { event?: string; is_final?: boolean; data?: { audio?: string }; base_resp?: { status_msg?: string } };
      events++;
      if (event.event === 'task_started') return piece();
      if (event.event === 'task_failed') return reject(new Error(`the socket failed: ${event.base_resp?.status_msg}`));
      if (event.event !== 'task_continued') return;
      const hex = event.data?.audio;
      if (typeof hex === 'string' && !event.is_final) audioBytes += hex.length / 2;
      const heard = audioBytes / (2 * SAMPLE_RATE) / 60;
      for (const m of MARKS_MIN)
        if (heard >= m && !seen.has(m)) {
          seen.add(m);
          mark(`${m} min`);
        }
      if (!event.is_final || finishing) return;
      if (heard < minutes) return piece();
      finishing = true;
      ws.send(JSON.stringify({ event: 'task_finish' }));
    });
    ws.on('close', () => {
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      void Promise.all(reads).then(() => resolve({ events, marks, anchor, seconds }));
    });
    ws.on('error', reject);
  });
}

export async function benchTapesMemory(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tapes-memory-'));
  const upstream = await spawnEmulator(['--seed', 'bench-upstream'], GC_ON_SIGNAL);
  const recorder = await spawnEmulator(['--seed', 'bench', '--record', dir, '--upstream-speech', upstream.speechUrl], GC_ON_SIGNAL);
  try {
    const run = await longSocket(recorder.speechUrl, { recorder: recorder.child.pid!, upstream: upstream.child.pid! }, 10);
    // The tape is written once the socket ended on both sides.
    const end = Date.now() + 60_000;
    while (!readdirSync(dir).some((n) => n.endsWith('.json') && !n.startsWith('.')) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const after = await memoryOf(recorder.child.pid!);
    const tape = readdirSync(dir).find((n) => n.endsWith('.json') && !n.startsWith('.'));
    const steps = tape ? (JSON.parse(readFileSync(join(dir, tape), 'utf8')) as { answer: { stream: { steps: unknown[] } } }).answer.stream.steps.length : 0;
    const m = run.marks;
    const a = run.anchor;
    const growth = (x: Record<string, Memory>, k: keyof Memory) => Math.round((x['10 min']![k] - x['1 min']![k]) * 10) / 10;
    return {
      recorder_rss_mb: { ...m, 'tape written': after },
      upstream_rss_mb_same_run: a,
      growth_1_to_10_min_mb: {
        recorder: { rss: growth(m, 'rss'), after_gc: growth(m, 'after_gc') },
        upstream: { rss: growth(a, 'rss'), after_gc: growth(a, 'after_gc') },
      },
      timeline_steps: steps,
      socket_events: run.events,
      run_seconds: run.seconds,
      goal: 'flat: RSS at 10 min about that at 1 min',
    };
  } finally {
    recorder.child.kill('SIGTERM');
    upstream.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchTapesMemory(), null, 2));
