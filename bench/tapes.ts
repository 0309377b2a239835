/**
 * Tapes (docs/tapes.md), two ratios measured in the same run, rounds alternating so the machine's load falls on both:
 * - replay: the time of a replayed answer beside the emulator's own answer of the same request (goal ≤ 1.2×), for a
 *   whole T2A answer (JSON with hex audio) and a streamed one (SSE, as fast as it can be sent: --replay-speed 0);
 * - recording: the first-byte delay a recording emulator adds beside a direct call to the upstream (goal ≤ 5 ms),
 *   for the streamed answer (its first byte is the first event).
 * The client, the recorder and the replaying emulators are in this process over kept-alive connections; the upstream
 * is an emulator in its own process (as the real service is elsewhere: its synthesis never holds this event loop).
 * Figures are medians of ROUNDS calls each, after a warm-up. Then memory while recording a 10-minute socket
 * (bench/tapes-memory.ts). Runnable alone: npx tsx bench/tapes.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmulator } from '../src/index.js';
import { benchTapesMemory, spawnEmulator } from './tapes-memory.js';

const ROUNDS = 150;
const WARM_UP = 20;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const body = (stream: boolean) =>
  JSON.stringify({ model: 'speech-02-turbo', text: 'The quick brown fox jumps over the lazy dog.', stream, voice_setting: { voice_id: 'male-qn-qingse' } });

/** One POST /v1/t2a_v2: ms to the first body byte and ms to the end. */
function t2a(base: string, payload: string): Promise<{ first: number; total: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = 0;
    const req = request(
      `${base}/v1/t2a_v2`,
      { method: 'POST', agent, headers: { authorization: 'Bearer bench-key', 'content-type': 'application/json' } },
      (res) => {
        res.on('data', () => (first ||= performance.now() - started));
        res.on('end', () => resolve({ first, total: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Alternates calls to `a` and `b`; the medians of each. */
async function alternate(a: string, b: string, payload: string, pick: 'first' | 'total'): Promise<{ a: number; b: number }> {
  for (let i = 0; i < WARM_UP; i++) await Promise.all([t2a(a, payload), t2a(b, payload)]);
  const xa: number[] = [];
  const xb: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [first, second] = i % 2 ? [a, b] : [b, a];
    const r1 = await t2a(first, payload);
    const r2 = await t2a(second, payload);
    (first === a ? xa : xb).push(r1[pick]);
    (second === a ? xa : xb).push(r2[pick]);
  }
  return { a: median(xa), b: median(xb) };
}

export async function benchTapes(): Promise<Record<string, unknown>> {
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  const loadBefore = load();
  const timings = await benchTimings();
  const memory = await benchTapesMemory();
  return { ...timings, record_long_socket_memory: memory, load_average: { before: loadBefore, after: load() } };
}

async function benchTimings(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tapes-'));
  const quiet = { logLevel: 'silent' as const, seed: 'bench' };
  const upstream = await spawnEmulator(['--seed', 'bench-upstream']);
  const recorder = await startEmulator({ ...quiet, record: dir, upstreamSpeech: upstream.speechUrl });
  try {
    // Recording: the stream's first byte through the recorder beside the upstream called directly.
    const recording = await alternate(recorder.speechUrl, upstream.speechUrl, body(true), 'first');
    // The tapes of both requests, then a replaying emulator beside one answering itself.
    await t2a(recorder.speechUrl, body(false));
    await recorder.close();
    const replayer = await startEmulator({ ...quiet, replay: dir, replaySpeed: 0 });
    const own = await startEmulator(quiet);
    try {
      const whole = await alternate(replayer.speechUrl, own.speechUrl, body(false), 'total');
      const streamed = await alternate(replayer.speechUrl, own.speechUrl, body(true), 'total');
      return {
        rounds: ROUNDS,
        replay_whole_ms: { replayed: round(whole.a), own: round(whole.b), ratio: round(whole.a / whole.b), goal: '<= 1.2' },
        replay_stream_ms: { replayed: round(streamed.a), own: round(streamed.b), ratio: round(streamed.a / streamed.b), goal: '<= 1.2' },
        record_first_byte_ms: {
          through_recorder: round(recording.a),
          upstream_direct: round(recording.b),
          added: round(recording.a - recording.b),
          goal: '<= 5',
        },
      };
    } finally {
      await replayer.close();
      await own.close();
    }
  } finally {
    await recorder.close();
    upstream.child.kill('SIGTERM');
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchTapes(), null, 2));
