/**
 * The one guard every streamed answer sends its frames through: T2A server-sent events, chunked
 * platform audio and every WebSocket. It owns what all of them share: the chunk count (and the
 * journal's `chunks`), the `cut_after_chunks` fault, a client that left, the emulator's shutdown at a
 * frame boundary, the journal note of how the stream ended, and finishing the entry once. A transport
 * only says how one frame is written, how its connection is cut and how it ends for shutdown.
 *
 * A new per-chunk behaviour (pacing, an audio fault) is one more entry of CHUNK_STEPS below.
 */
import type { FastifyRequest } from 'fastify';
import type { JournalEntry } from './journal.js';
import { takeFault } from './request-context.js';
import { finishEntry } from './request-finish.js';

/** What a frame is to the guard; the shared constants below keep a send free of allocation. */
export interface FrameKind {
  /** Counts as a chunk: the journal's `chunks` and the `cut_after_chunks` fault count it. */
  readonly chunk: boolean;
  /** Carries audio. */
  readonly audio: boolean;
  /** The last chunk of an answer: once it left the answer is whole, so no fault cuts after it. */
  readonly final: boolean;
}

export const AUDIO_CHUNK: FrameKind = Object.freeze({ chunk: true, audio: true, final: false });
export const FINAL_AUDIO_CHUNK: FrameKind = Object.freeze({ chunk: true, audio: true, final: true });
/** An event that is the stream's content without audio (the recognition stream's results). */
export const EVENT_CHUNK: FrameKind = Object.freeze({ chunk: true, audio: false, final: false });
/** The last event of an answer without audio (speech-to-text's `finish: true`). */
export const FINAL_EVENT_CHUNK: FrameKind = Object.freeze({ chunk: true, audio: false, final: true });

/** How a transport writes its frames: the only part that differs between SSE, chunked bodies and sockets. */
export interface StreamTransport<F> {
  /** Writes one frame; false (or a promise of false) when the client is gone. */
  write(frame: F, kind: FrameKind): boolean | Promise<boolean>;
  /** Drops the connection without a clean end (the `cut_after_chunks` fault imitates a broken network). */
  cut(): void | Promise<void>;
  /** Ends the stream cleanly because the emulator shuts down: a last error event where the protocol has one. */
  endForShutdown(): void | Promise<void>;
}

/** How a stream ended. `done` and `failed` are said by the transport; the guard finds the others. */
export type StreamEnd = 'done' | 'cut' | 'left' | 'shutdown' | 'failed';

export interface StreamGuardOptions {
  /** The journal entry the stream belongs to (null for a request that has none). */
  entry: JournalEntry | null;
  /** The fault's `cut_after_chunks`: the connection drops after this many chunks (0: before the first). */
  cutAfterChunks?: number;
  /** The emulator's shutdown signal: the stream ends at the next frame boundary once it fires. */
  closing?: AbortSignal;
  /**
   * Finishes the journal entry of a stream whose connection is gone (cut, client left). A clean end
   * is finished by the request pipeline when the body ends; a socket finishes its entry when it closes.
   */
  finish?: () => void;
  /** Told once, however the stream ended (the speech area's stream view, a synthesis to abort). */
  onEnd?: (end: StreamEnd, chunks: number) => void;
  /** Where a client that left is told: routine, so at debug level. */
  logger?: { debug(msg: string): void };
}

/** A step's verdict on one frame: go on (null), or end the stream this way. */
type Verdict = StreamEnd | null;

/**
 * One per-chunk behaviour: `before` may stop a frame from leaving, `after` runs once it left (the
 * count already includes it). Steps run in the order of CHUNK_STEPS; the first verdict ends the stream.
 */
interface ChunkStep {
  before?(guard: StreamGuard<unknown>, kind: FrameKind): Verdict;
  after?(guard: StreamGuard<unknown>, kind: FrameKind): Verdict;
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
const BEFORE = CHUNK_STEPS.flatMap((s) => (s.before ? [s.before] : []));
const AFTER = CHUNK_STEPS.flatMap((s) => (s.after ? [s.after] : []));

const NOTES: Partial<Record<StreamEnd, (chunks: number) => string>> = {
  cut: (chunks) => `connection cut after ${chunks} chunks (fault)`,
  left: () => 'client left before the end of the stream',
  shutdown: () => 'stream ended by shutdown',
};

export class StreamGuard<F> {
  /** Chunks that left so far. */
  chunks = 0;
  /** How the stream ended; null while it runs. */
  ended: StreamEnd | null = null;
  readonly cutAt: number | undefined;

  constructor(
    private readonly transport: StreamTransport<F>,
    readonly options: StreamGuardOptions,
  ) {
    this.cutAt = options.cutAfterChunks;
  }

  /**
   * Sends one frame through the steps. True when it left and the stream goes on; false when the stream
   * has ended (now or before): the caller stops producing. A transport whose writes are synchronous gets
   * a boolean back, never a promise.
   */
  send(frame: F, kind: FrameKind): boolean | Promise<boolean> {
    if (this.ended) return false;
    for (const step of BEFORE) {
      const verdict = step(this, kind);
      if (verdict) return this.stop(verdict);
    }
    const written = this.transport.write(frame, kind);
    if (typeof written === 'boolean') return this.afterWrite(written, kind);
    return written.then((ok) => this.afterWrite(ok, kind));
  }

  /**
   * The same steps for a transport that is pulled rather than written to (a Readable body): each frame
   * of `source` is handed on by yielding it, and counts as written once the consumer took it. The
   * transport's `write` is not called. Ends the stream `done` when the source is exhausted.
   */
  async *frames(source: AsyncIterable<F>, kind: FrameKind): AsyncGenerator<F> {
    for await (const frame of source) {
      if (this.ended) return;
      for (const step of BEFORE) {
        const verdict = step(this, kind);
        if (verdict) return void (await this.end(verdict));
      }
      yield frame;
      const goOn = this.afterWrite(true, kind);
      if (goOn !== true && !(await goOn)) return;
    }
    if (!this.ended) await this.end('done');
  }

  /** Ends the stream once: the transport's own action for a cut or a shutdown, the note, the finish. */
  end(how: StreamEnd): void | Promise<void> {
    if (this.ended) return;
    this.ended = how;
    const action = how === 'cut' ? this.transport.cut() : how === 'shutdown' ? this.transport.endForShutdown() : undefined;
    if (action) return action.then(() => this.close(how));
    this.close(how);
  }

  private afterWrite(ok: boolean, kind: FrameKind): boolean | Promise<boolean> {
    if (this.ended) return false;
    if (!ok) return this.stop('left');
    if (kind.chunk) {
      this.chunks += 1;
      const entry = this.options.entry;
      entry?.countChunk();
    }
    for (const step of AFTER) {
      const verdict = step(this, kind);
      if (verdict) return this.stop(verdict);
    }
    return true;
  }

  private stop(how: StreamEnd): false | Promise<false> {
    const ending = this.end(how);
    return ending ? ending.then(() => false as const) : false;
  }

  private close(how: StreamEnd): void {
    const note = NOTES[how];
    if (note) this.options.entry?.setNote(note(this.chunks));
    if (how === 'left') this.options.logger?.debug('client left before the end of the stream');
    if (how === 'cut' || how === 'left') this.options.finish?.();
    this.options.onEnd?.(how, this.chunks);
  }
}

/**
 * The guard of one request's stream: its journal entry, its `cut_after_chunks` (taken here, so the
 * fault is read in one place) and, for an HTTP answer (`status`), the entry finished when the
 * connection is gone. A socket leaves `status` out: its entry finishes when the socket closes.
 */
export function guardStream<F>(
  req: FastifyRequest,
  transport: StreamTransport<F>,
  options: Omit<StreamGuardOptions, 'entry' | 'cutAfterChunks' | 'finish'> & { status?: number } = {},
): StreamGuard<F> {
  const { status, ...rest } = options;
  return new StreamGuard(transport, {
    ...rest,
    entry: req.ctx?.entry ?? null,
    cutAfterChunks: takeFault(req, 'cut_after_chunks'),
    finish: status === undefined ? undefined : () => finishEntry(req, status),
  });
}
