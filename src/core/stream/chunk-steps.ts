/**
 * The per-chunk steps of the stream guard (core/stream/guard.ts): each decides whether a chunk leaves (the
 * emulator's shutdown, the `cut_after_chunks` fault), in the order of CHUNK_STEPS, and the journal note of
 * each way a stream can end. A new step that decides whether a chunk leaves is one more entry here.
 */
import type { FrameKind, StreamEnd } from './frames.js';
import { countOf } from '../http/describe.js';

/** A step's verdict on one frame: go on (null), or end the stream this way. */
export type Verdict = StreamEnd | null;

/** What a step reads of the guard (core/stream/guard.ts `StreamGuard`). */
export interface GuardCount {
  readonly options: { readonly closing?: AbortSignal };
  /** Chunks that left so far. */
  readonly chunks: number;
  /** The fault's `cut_after_chunks`, when the stream has one. */
  readonly cutAt: number | undefined;
}

/**
 * One per-chunk behaviour: `before` may stop a frame from leaving, `after` runs once it left (the
 * count already includes it). Steps run in the order of CHUNK_STEPS; the first verdict ends the stream.
 */
interface ChunkStep {
  before?(guard: GuardCount, kind: FrameKind): Verdict;
  after?(guard: GuardCount, kind: FrameKind): Verdict;
}

/** The emulator shuts down: no frame starts once it began (a frame already written stays whole). */
const shutdownAtBoundary: ChunkStep = {
  before: (guard) => (guard.options.closing?.aborted ? 'shutdown' : null),
};

/** `cut_after_chunks=N`: N chunks leave, then the connection drops without a clean end. */
const cutAfterChunks: ChunkStep = {
  before: (guard, kind) => (kind.chunk && guard.cutAt !== undefined && guard.chunks >= guard.cutAt ? 'cut' : null),
  after: (guard, kind) => (kind.chunk && !kind.final && guard.cutAt !== undefined && guard.chunks >= guard.cutAt ? 'cut' : null),
};

const CHUNK_STEPS: readonly ChunkStep[] = [shutdownAtBoundary, cutAfterChunks];
export const BEFORE = CHUNK_STEPS.flatMap((s) => (s.before ? [s.before] : []));
export const AFTER = CHUNK_STEPS.flatMap((s) => (s.after ? [s.after] : []));

export const NOTES: Partial<Record<StreamEnd, (chunks: number) => string>> = {
  cut: (chunks) => `connection cut after ${countOf(chunks, 'chunk')} (fault)`,
  left: () => 'client left before the end of the stream',
  shutdown: () => 'stream ended by shutdown',
  stalled: () => 'client stopped reading: its send buffer stayed full, the connection was closed',
};
