/** The latency figures: a journal entry's delivery figures, `GET /_emulator/report`, and verify's budgets. */

/** One answer's delivery figures (an HTTP stream is one answer; a socket or call has one per answer). */
export interface TurnFigures {
  /** From the answer's start (the request, the text piece, the end of the user's utterance) to its first audio; null when none left. */
  first_audio_ms: number | null;
  /** Milliseconds of audio sent. */
  audio_ms: number;
  /** Audio delivered per wall second from the first frame to the last; null with fewer than two frames. */
  rtf: number | null;
  /** Gaps of at least `stall_min_ms` a listener playing from the first audio would have heard… */
  stalls: number;
  /** …and their total length. */
  gap_ms: number;
  /** The client left or cancelled the answer: audio sent after that (ms of audio)… */
  overrun_ms?: number;
  /** …and how long after it the last audio left. */
  stop_ms?: number;
}

/** A stream's delivery figures: its first answer's first audio, sums over its answers, and each answer when there were several. */
export interface DeliveryFigures extends TurnFigures {
  turns?: TurnFigures[];
  /** Answers in all, when more than the journal keeps per entry. */
  turns_total?: number;
}

// ---- report -------------------------------------------------------------------------------------

/** The figures a report aggregates and a budget names. */
export type Figure = 'first_audio_ms' | 'turn_latency_ms' | 'rtf' | 'overrun_ms' | 'stop_ms' | 'gap_ms' | 'stalls';
/** The statistics of a figure (percentiles by nearest rank). */
export type Stat = 'p50' | 'p95' | 'p99' | 'min' | 'max';

export interface FigureStats {
  /** Values aggregated: entries, answers, or cut answers, by figure. */
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
}

export interface FiguresReport {
  /** Entries with audio figures. */
  count: number;
  /** Answers (turns) among them. */
  turns: number;
  /** Answers the client left or cancelled. */
  cut: number;
  figures: Record<Figure, FigureStats>;
}

export interface OperationReport extends FiguresReport {
  service: 'speech' | 'platform';
  method: string;
  path: string;
}

/** `GET /_emulator/report`: the latency figures of the entries the journal query selects. */
export interface LatencyReport {
  percentile_method: 'nearest-rank';
  stall_min_ms: number;
  all: FiguresReport;
  operations: OperationReport[];
}

/** A bound on one statistic: every comparison given must hold. */
export interface Bound {
  lte?: number;
  lt?: number;
  gte?: number;
  gt?: number;
}

/** verify's `budgets`: `{ first_audio_ms: { p95: { lte: 800 } } }`. */
export type Budgets = { [F in Figure]?: { [S in Stat]?: Bound } };

/** One budget as checked. */
export interface BudgetResult {
  figure: Figure;
  stat: Stat;
  value: number | null;
  count: number;
  bound: Bound;
  ok: boolean;
  message?: string;
}
