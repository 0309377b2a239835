/**
 * `GET /_emulator/report`: the latency figures of the journal's audio streams, per operation and for
 * all the entries selected (the journal query's filters), with nearest-rank percentiles
 * (control/figures.ts). Entries without streamed audio are not counted.
 */
import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import type { JournalEntry } from '../core/journal/journal.js';
import { STALL_MIN_MS } from '../core/journal/journal.js';
import { input } from './common.js';
import { FIGURES, gather, reportOf, statsOf, type Figure, type FigureStats, type FiguresReport } from './figures.js';
import { JOURNAL_QUERY_KEYS, journalQuery, selectEntries, type JournalQueryInput } from './journal.js';

export interface OperationReport extends FiguresReport {
  service: 'speech' | 'platform';
  method: string;
  path: string;
}

export interface LatencyReport {
  percentile_method: 'nearest-rank';
  /** A gap shorter than this is not a stall. */
  stall_min_ms: number;
  /** Every entry selected, all operations together. */
  all: FiguresReport;
  operations: OperationReport[];
}

/** The report over `entries` (any order): one group per service, method and path, sorted by them. */
export function latencyReport(entries: readonly JournalEntry[]): LatencyReport {
  const groups = new Map<string, JournalEntry[]>();
  for (const e of entries) {
    if (!e.delivery) continue;
    const key = `${e.service} ${e.path} ${e.method}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(e);
  }
  // Each entry is read once: the whole selection's values are its operations' values together.
  const all = { values: Object.fromEntries(FIGURES.map((f) => [f, [] as number[]])) as Record<Figure, number[]>, count: 0, turns: 0 };
  const operations = [...groups.keys()].sort().map((key): OperationReport => {
    const group = groups.get(key)!;
    const { samples, count, turns } = gather(group);
    for (const f of FIGURES) for (const v of samples[f].values) all.values[f].push(v);
    all.count += count;
    all.turns += turns;
    const { service, method, path } = group[0]!;
    return { service, method, path, ...reportOf(samples, count, turns) };
  });
  const figures = {} as Record<Figure, FigureStats>;
  for (const f of FIGURES) figures[f] = statsOf(all.values[f]);
  return {
    percentile_method: 'nearest-rank',
    stall_min_ms: STALL_MIN_MS,
    all: { count: all.count, turns: all.turns, cut: all.values.overrun_ms.length, figures },
    operations,
  };
}

export function reportRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get(
    '/report',
    {
      ...input({ query: JOURNAL_QUERY_KEYS, what: 'report query' }),
      schema: {
        summary: 'Latency figures of the audio streams the journal holds',
        description:
          'The filters of GET /_emulator/journal. Answer: {percentile_method: "nearest-rank", stall_min_ms, all, operations: [{service, method, path, count, turns, cut, ' +
          'figures: {first_audio_ms, turn_latency_ms, rtf, overrun_ms, stop_ms, gap_ms, stalls: {count, p50, p95, p99, min, max}}}]} (docs/voice-agents.md).',
        querystring: journalQuery,
      },
    },
    async (req) => latencyReport(selectEntries(emu, req.query as JournalQueryInput, 'report query')),
  );
}
