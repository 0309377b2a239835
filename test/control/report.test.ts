/**
 * The latency figures of a seeded paced run, as the journal carries them per entry and as
 * `GET /_emulator/report`, `verify`'s budgets and `/_emulator/metrics` aggregate them: T2A streams with
 * different `ttfa_ms`, one with a stall, a speech socket with two answers (turns) and a bidirectional
 * stream cancelled in the middle (overrun, time to stop).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { VerificationError } from '../../src/client/index.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { BIDI_START, bidiClient } from '../speech/bidi/bidi-helpers.js';
import { streamT2a, textOf } from '../speech/pacing-helpers.js';
import { session, START } from '../speech/ws/ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const PCM = { audio_setting: { format: 'pcm', sample_rate: 16000 } };
const TTFAS = [120, 240, 360, 480, 600];
const T2A = '/v1/t2a_v2';
const WS = '/ws/v1/t2a_v2';
const BIDI = '/ws/v1/t2a_v2_bidi';

/** Nearest rank over the values: the value at rank ⌈p/100 × n⌉ of the sorted values. */
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

async function finishedEntries(path: string, count: number): Promise<any[]> {
  for (let i = 0; i < 200; i++) {
    const entries = (await ctl.journal({ path })).body.entries as any[];
    if (entries.length >= count && entries.every((e) => e.status !== null && e.delivery)) return entries;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the entries of ${path} never finished`);
}

let t2aEntries: any[] = [];
let wsEntry: any;
let bidiEntry: any;

beforeAll(async () => {
  // Five paced T2A streams, asked together; then one with a stall of 400 ms after 500 ms of audio at real time.
  await Promise.all(TTFAS.map((ttfa) => streamT2a(emu.speechUrl, { text: textOf(8), ...PCM }, { fault: `ttfa_ms=${ttfa}` })));
  await streamT2a(emu.speechUrl, { text: textOf(12), ...PCM }, { fault: 'ttfa_ms=100;rtf=1;stall_ms=400;stall_at_ms=500' });
  // A speech socket with two pieces of text: two answers, each timed from its own text.
  await session(
    emu.speechUrl,
    [{ ...START, ...PCM }, { event: 'task_continue', text: textOf(5) }, { event: 'task_continue', text: textOf(6) }, { event: 'task_finish' }],
    {
      headers: { 'x-emulator-fault': 'ttfa_ms=150' },
    },
  );
  // A bidirectional stream at real time, cancelled after about 600 ms of audio.
  const c = await bidiClient(emu.speechUrl, { headers: { 'x-emulator-fault': 'rtf=1' } });
  c.send({ ...BIDI_START, ...PCM });
  await c.waitFor((m) => m.event === 'task_started');
  c.send({ event: 'task_continue', text: textOf(30) });
  c.send({ event: 'task_flush' });
  const audio = () => c.messages.filter((m) => m.event === 'task_continued' && m.data?.audio);
  let played = 0;
  while (played < 600) {
    await c.waitFor((m) => m.event === 'task_continued', audio().length + 1);
    played = audio().reduce((n, m) => n + m.data.audio.length / 64, 0);
  }
  c.send({ event: 'task_cancel' });
  await c.waitFor((m) => m.event === 'task_canceled');
  c.ws.close();
  await c.closed;
  t2aEntries = await finishedEntries(T2A, 6);
  wsEntry = (await finishedEntries(WS, 1))[0];
  bidiEntry = (await finishedEntries(BIDI, 1))[0];
}, 60_000);

describe('delivery figures in the journal', () => {
  it('each T2A stream carries its time to first audio (no sooner than its ttfa_ms), real-time factor and stalls', () => {
    const byTtfa = new Map<number, any>(t2aEntries.map((e) => [Number(/ttfa_ms=(\d+)/.exec(e.request.headers['x-emulator-fault'])![1]), e]));
    for (const ttfa of TTFAS) {
      const d = byTtfa.get(ttfa).delivery;
      expect(d.first_audio_ms).toBeGreaterThanOrEqual(ttfa);
      // Well before its audio would have played (a busy machine delays it some).
      expect(d.first_audio_ms).toBeLessThan(ttfa + 2000);
      expect(d.audio_ms).toBeGreaterThan(0);
      expect(d.rtf).toBeGreaterThan(0);
      expect(d.overrun_ms).toBeUndefined();
    }
    // The stalled stream: one stall of about 400 ms heard by a listener playing from the first audio, delivered at about real time.
    const stalled = byTtfa.get(100).delivery;
    expect(stalled.stalls).toBeGreaterThanOrEqual(1);
    expect(stalled.gap_ms).toBeGreaterThanOrEqual(350);
    expect(stalled.gap_ms).toBeLessThan(1500);
    expect(stalled.rtf).toBeGreaterThan(0.2);
    expect(stalled.rtf).toBeLessThan(1.05);
  });

  it('a socket with two answers times each from its own text; a cancelled answer carries its overrun and time to stop', () => {
    expect(wsEntry.delivery.turns).toHaveLength(2);
    for (const t of wsEntry.delivery.turns) {
      expect(t.first_audio_ms).not.toBeNull();
      expect(t.audio_ms).toBeGreaterThan(0);
    }
    expect(wsEntry.delivery.first_audio_ms).toBe(wsEntry.delivery.turns[0].first_audio_ms);
    expect(bidiEntry.delivery.overrun_ms).toBeGreaterThanOrEqual(0);
    expect(bidiEntry.delivery.overrun_ms).toBeLessThan(300);
    expect(bidiEntry.delivery.stop_ms).toBeGreaterThanOrEqual(0);
    expect(bidiEntry.delivery.stop_ms).toBeLessThan(250);
    expect(bidiEntry.delivery.audio_ms).toBeGreaterThanOrEqual(600);
  });
});

describe('GET /_emulator/report', () => {
  it('per operation, the nearest-rank percentiles of the journal’s own figures', async () => {
    const report = await ctl.client.report();
    expect(report.percentile_method).toBe('nearest-rank');
    const t2a = report.operations.find((o) => o.path === T2A)!;
    expect(t2a).toMatchObject({ service: 'speech', method: 'POST', count: 6, turns: 6, cut: 0 });
    const firsts = t2aEntries.map((e) => e.delivery.first_audio_ms);
    for (const p of [50, 95, 99] as const) expect(t2a.figures.first_audio_ms[`p${p}`]).toBe(nearestRank(firsts, p));
    expect(t2a.figures.first_audio_ms.max).toBe(Math.max(...firsts));
    expect(t2a.figures.gap_ms.max).toBe(Math.max(...t2aEntries.map((e) => e.delivery.gap_ms)));
    expect(t2a.figures.stalls.max).toBe(Math.max(...t2aEntries.map((e) => e.delivery.stalls)));
    expect(t2a.figures.rtf.min).toBe(Math.min(...t2aEntries.map((e) => e.delivery.rtf)));

    // The socket's turns are its two answers; the cancelled stream's overrun and time to stop are its own.
    const ws = report.operations.find((o) => o.path === WS)!;
    expect(ws).toMatchObject({ count: 1, turns: 2 });
    const turnLatencies = wsEntry.delivery.turns.map((t: any) => t.first_audio_ms);
    expect(ws.figures.turn_latency_ms.p50).toBe(nearestRank(turnLatencies, 50));
    expect(ws.figures.turn_latency_ms.p95).toBe(nearestRank(turnLatencies, 95));
    const bidi = report.operations.find((o) => o.path === BIDI)!;
    expect(bidi).toMatchObject({ count: 1, cut: 1 });
    expect(bidi.figures.overrun_ms.p99).toBe(bidiEntry.delivery.overrun_ms);
    expect(bidi.figures.stop_ms.p50).toBe(bidiEntry.delivery.stop_ms);

    // All entries together: every answer's turn latency.
    const everyTurn = [...t2aEntries.map((e) => e.delivery.first_audio_ms), ...turnLatencies, bidiEntry.delivery.first_audio_ms];
    expect(report.all.figures.turn_latency_ms.count).toBe(everyTurn.length);
    expect(report.all.figures.turn_latency_ms.p95).toBe(nearestRank(everyTurn, 95));
  });

  it('takes the journal’s filters, and refuses what the journal query refuses', async () => {
    const only = await ctl.client.report({ path: WS });
    expect(only.operations.map((o) => o.path)).toEqual([WS]);
    expect(only.all.count).toBe(1);
    const none = await ctl.client.report({ path: '/v1/get_voice' });
    expect(none.operations).toEqual([]);
    expect(none.all.figures.first_audio_ms).toEqual({ count: 0, p50: null, p95: null, p99: null, min: null, max: null });
    const bad = await ctl.call('GET', '/report?since_ms=5&until_ms=1');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/report query field since_ms/);
    const unknown = await ctl.call('GET', '/report?percentile=90');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/unknown query parameter percentile/);
  });
});

describe('verify with budgets', () => {
  it('passes when the budget holds, with each budget as checked', async () => {
    const maxStalls = Math.max(...t2aEntries.map((e) => e.delivery.stalls));
    const ok = await ctl.client.verify({ request: { path: T2A }, budgets: { first_audio_ms: { p95: { lte: 5000 } }, stalls: { max: { lte: maxStalls } } } });
    expect(ok.budgets).toHaveLength(2);
    expect(ok.budgets![0]).toMatchObject({ figure: 'first_audio_ms', stat: 'p95', ok: true, count: 6 });
    expect(ok.budgets![0]!.value).toBe(
      nearestRank(
        t2aEntries.map((e) => e.delivery.first_audio_ms),
        95,
      ),
    );
  });

  it('fails with 409 naming the requests over budget, worst first', async () => {
    const res = await ctl.call('POST', '/verify', { request: { path: T2A }, budgets: { first_audio_ms: { p95: { lte: 300 } } } });
    expect(res.status).toBe(409);
    expect(res.body.ok).toBe(false);
    expect(res.body.error.message).toMatch(/^first_audio_ms p95 is [\d.]+ ms over 6 values, budget at most 300 ms$/);
    const over = t2aEntries.filter((e) => e.delivery.first_audio_ms > 300).sort((a, b) => b.delivery.first_audio_ms - a.delivery.first_audio_ms);
    expect(over.length).toBeGreaterThanOrEqual(3);
    expect(res.body.near_misses.map((m: any) => m.entry.id)).toEqual(over.map((e) => e.id));
    expect(res.body.near_misses[0].differences[0]).toBe(`first_audio_ms: ${over[0].delivery.first_audio_ms} ms, budget p95 at most 300 ms`);
    // Through the client: a VerificationError listing them.
    const err = await ctl.client.verify({ request: { path: T2A }, budgets: { first_audio_ms: { p95: { lte: 300 } } } }).catch((e) => e);
    expect(err).toBeInstanceOf(VerificationError);
    expect(err.message).toMatch(/over budget, worst first:\n {2}- POST \/v1\/t2a_v2 \(req_\d+/);
    expect(err.budgets[0].ok).toBe(false);
  });

  it('a turn over budget is named with its turn; a figure no entry carries fails', async () => {
    const turns = wsEntry.delivery.turns.map((t: any) => t.first_audio_ms);
    const res = await ctl.call('POST', '/verify', { request: { path: WS }, budgets: { turn_latency_ms: { max: { lt: Math.min(...turns) } } } });
    expect(res.status).toBe(409);
    expect(res.body.near_misses[0].differences.every((d: string) => /^turn_latency_ms \(turn [12]\): /.test(d))).toBe(true);
    const none = await ctl.call('POST', '/verify', { request: { path: T2A }, budgets: { overrun_ms: { max: { lte: 100 } } } });
    expect(none.status).toBe(409);
    expect(none.body.error.message).toMatch(/overrun_ms max: no entry selected carries overrun_ms/);
    const rtf = await ctl.call('POST', '/verify', { request: { path: BIDI }, budgets: { rtf: { min: { gte: 0.5 } }, overrun_ms: { max: { lte: 300 } } } });
    expect(rtf.status).toBe(200);
  });

  it('refuses a budget it cannot check, naming the field', async () => {
    const empty = await ctl.call('POST', '/verify', { request: { path: T2A }, budgets: { first_audio_ms: { p95: {} } } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/budgets\.first_audio_ms\.p95.*lte, lt, gte or gt/);
    const unknown = await ctl.call('POST', '/verify', { request: { path: T2A }, budgets: { ttfb_ms: { p95: { lte: 1 } } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/budgets.*ttfb_ms/);
    const stat = await ctl.call('POST', '/verify', { request: { path: T2A }, budgets: { first_audio_ms: { p90: { lte: 1 } } } });
    expect(stat.status).toBe(400);
    expect(stat.body.error.message).toMatch(/p90/);
  });
});

/** Prometheus text as samples: `name` with its labels (in any order) → value. */
function samplesOf(text: string): (name: string, labels: Record<string, string>) => number {
  const samples = new Map<string, number>();
  const keyOf = (name: string, labels: Record<string, string>) =>
    `${name}{${Object.keys(labels)
      .sort()
      .map((k) => `${k}=${labels[k]}`)
      .join(',')}}`;
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    samples.set(keyOf(m[1]!, labels), Number(m[3]));
  }
  return (name, labels) => {
    const key = keyOf(name, labels);
    expect(samples.has(key), key).toBe(true);
    return samples.get(key)!;
  };
}

describe('/_emulator/metrics', () => {
  it('exposes the same figures as histograms: counts and sums equal the journal’s, buckets cumulative', async () => {
    const value = samplesOf(await ctl.client.metrics());
    const t2a = { service: 'speech', method: 'POST', path: T2A };
    const firsts = t2aEntries.map((e) => e.delivery.first_audio_ms / 1000);
    expect(value('emulator_first_audio_seconds_count', t2a)).toBe(6);
    expect(value('emulator_first_audio_seconds_sum', t2a)).toBeCloseTo(
      firsts.reduce((a, b) => a + b, 0),
      6,
    );
    for (const le of ['0.2', '0.3', '0.5', '0.8']) {
      expect(value('emulator_first_audio_seconds_bucket', { ...t2a, le })).toBe(firsts.filter((f) => f <= Number(le)).length);
    }
    expect(value('emulator_first_audio_seconds_bucket', { ...t2a, le: '+Inf' })).toBe(6);
    expect(value('emulator_audio_stalls_total', t2a)).toBe(t2aEntries.reduce((n, e) => n + e.delivery.stalls, 0));
    expect(value('emulator_audio_gap_seconds_sum', t2a)).toBeCloseTo(
      t2aEntries.reduce((n, e) => n + e.delivery.gap_ms / 1000, 0),
      6,
    );
    expect(value('emulator_delivered_rtf_count', t2a)).toBe(6);
    const ws = { service: 'speech', method: 'GET', path: WS };
    expect(value('emulator_turn_latency_seconds_count', ws)).toBe(2);
    expect(value('emulator_turn_latency_seconds_sum', ws)).toBeCloseTo(
      wsEntry.delivery.turns.reduce((n: number, t: any) => n + t.first_audio_ms / 1000, 0),
      6,
    );
    const bidi = { service: 'speech', method: 'GET', path: BIDI };
    expect(value('emulator_audio_overrun_seconds_count', bidi)).toBe(1);
    expect(value('emulator_audio_overrun_seconds_sum', bidi)).toBeCloseTo(bidiEntry.delivery.overrun_ms / 1000, 6);
    expect(value('emulator_audio_stop_seconds_count', bidi)).toBe(1);
  });
});
