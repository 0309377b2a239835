/**
 * The latency figures of the journal's audio streams, aggregated: what `GET /_emulator/report` shows
 * per operation and what `verify`'s budgets check. Each entry's own figures are its delivery record
 * (core/journal/delivery.ts); this file only gathers and ranks them.
 *
 * Percentiles are nearest-rank: the p-th percentile of n values is the value at rank ⌈p/100 × n⌉ of
 * the values sorted ascending (so it is always one of the values seen, and p100 is the maximum).
 */
import type { JournalEntry } from '../core/journal/journal.js';

/** The figures a report aggregates and a budget may name. */
export const FIGURES = ['first_audio_ms', 'turn_latency_ms', 'rtf', 'overrun_ms', 'stop_ms', 'gap_ms', 'stalls'] as const;
export type Figure = (typeof FIGURES)[number];

/** The statistics of one figure a budget may name. */
export const STATS = ['p50', 'p95', 'p99', 'min', 'max'] as const;
export type Stat = (typeof STATS)[number];

export interface FigureStats {
  /** Values aggregated (entries, turns or cut answers, by figure). */
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
}

/**
 * A figure's values and where each came from (the entry, and the turn of a socket with several; -1
 * for none), in parallel arrays: a report over thousands of entries makes no object per value.
 */
export class FigureSamples {
  readonly values: number[] = [];
  readonly entries: JournalEntry[] = [];
  readonly turns: number[] = [];

  push(value: number, entry: JournalEntry, turn = -1): void {
    this.values.push(value);
    this.entries.push(entry);
    this.turns.push(turn);
  }

  get length(): number {
    return this.values.length;
  }
}

/** A figure's samples, per entry or per turn: which the docs' table says. */
export type Samples = Record<Figure, FigureSamples>;

export function emptySamples(): Samples {
  return Object.fromEntries(FIGURES.map((f) => [f, new FigureSamples()])) as Samples;
}

/**
 * Adds one entry's figures (answers how many answers it held; 0: no audio): per entry its first audio,
 * real-time factor, gaps and stalls; per answer (turn) its time to first audio (turn latency) and,
 * when the client left or cancelled it, its overrun and time to stop.
 */
export function addEntry(samples: Samples, entry: JournalEntry): number {
  const delivery = entry.delivery;
  if (!delivery) return 0;
  const { whole, turns } = delivery.summary();
  if (whole.first_audio_ms !== null) samples.first_audio_ms.push(whole.first_audio_ms, entry);
  if (whole.rtf !== null) samples.rtf.push(whole.rtf, entry);
  samples.gap_ms.push(whole.gap_ms, entry);
  samples.stalls.push(whole.stalls, entry);
  const several = turns.length > 1;
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i]!;
    const turn = several ? i : -1;
    if (t.first_audio_ms !== null) samples.turn_latency_ms.push(t.first_audio_ms, entry, turn);
    if (t.overrun_ms !== undefined) samples.overrun_ms.push(t.overrun_ms, entry, turn);
    if (t.stop_ms !== undefined) samples.stop_ms.push(t.stop_ms, entry, turn);
  }
  return turns.length;
}

/** Nearest rank: the value at rank ⌈p/100 × n⌉ of `sorted` (ascending); null when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export function statsOf(values: readonly number[]): FigureStats {
  // A typed array sorts numbers as numbers, without a comparator call per pair.
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    min: sorted.length ? sorted[0]! : null,
    max: sorted.length ? sorted[sorted.length - 1]! : null,
  };
}

/** What one group of entries (an operation, or all selected) comes to. */
export interface FiguresReport {
  /** Entries with audio figures. */
  count: number;
  /** Answers (turns) among them: one per HTTP stream, one per answer of a socket or call. */
  turns: number;
  /** Answers the client left or cancelled before their end. */
  cut: number;
  figures: Record<Figure, FigureStats>;
}

export function reportOf(samples: Samples, count: number, turns: number): FiguresReport {
  const figures = {} as Record<Figure, FigureStats>;
  for (const f of FIGURES) figures[f] = statsOf(samples[f].values);
  return { count, turns, cut: samples.overrun_ms.length, figures };
}

/** A group's entries gathered: their samples, how many carried figures and how many answers they held. */
export function gather(entries: Iterable<JournalEntry>): { samples: Samples; count: number; turns: number } {
  const samples = emptySamples();
  let count = 0;
  let turns = 0;
  for (const e of entries) {
    const answers = addEntry(samples, e);
    if (!answers) continue;
    count++;
    turns += answers;
  }
  return { samples, count, turns };
}

/** The unit a figure is counted in, for messages. */
export function unitOf(figure: Figure): string {
  return figure === 'rtf' ? '×' : figure === 'stalls' ? '' : ' ms';
}
