/**
 * What the stream guard (core/stream/guard.ts) and the transports that write through it share: what a
 * frame is to the guard, how a transport writes, how a stream ends and what a guard is told at its start.
 */
import type { JournalEntry } from '../journal/journal.js';
import type { StreamEnd } from '../journal/stream.js';
import type { StreamShape } from '../faults/faults.js';

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
  /**
   * A transport with a send buffer of its own (a socket): the bytes written that the client has not
   * taken yet, and a promise that settles when that buffer may have shrunk (or after `ms`). The guard
   * stops the stream's producer while the buffer is over its bound (StreamGuardOptions.sendBuffer).
   */
  buffered?(): number;
  drained?(ms: number): Promise<void>;
  /** Closes the connection of a client that stopped reading (the family's close code). */
  stalled?(): void | Promise<void>;
}

/** How a stream ended (declared with the journal's record of a stream, which the request log reads). */
export type { StreamEnd };

/** The bound of a transport's send buffer: over `bytes`, no frame leaves; still over after `stallMs` (wall time), the stream ends `stalled`. */
export interface SendBufferBound {
  bytes: number;
  stallMs: number;
}

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
  /** Its pace and audio faults (core/stream/shaping.ts); none: sent as fast as it is made, intact. */
  shape?: StreamShape;
  /** When the answer began, in wall time (performance.now): `ttfa_ms` counts from it. Default: now. */
  startedAt?: number;
  /** Where the journal's time to first audio of the first answer counts from (wall time): the request's arrival. Default: `startedAt`. */
  answerFrom?: number;
  /** Fires when the client is gone: a paced wait ends at once. */
  gone?: AbortSignal;
  /** Told once, before the first paced wait: the sender frees its synthesis slot (no slot is held while waiting). */
  onPaceWait?: () => void;
  /**
   * With a data dir: the commit of the changes made so far, when one is due (null when none is). A frame
   * waits for it before it leaves, so no frame acknowledges a change that is not on disk; a commit that
   * fails cuts the stream instead (nothing is acknowledged).
   */
  durable?: () => Promise<void> | null;
  /** The transport's send buffer is watched (back-pressure for a transport whose writes never wait). */
  sendBuffer?: SendBufferBound;
  /** Seeds the jitter and the corrupted bytes (the journal entry's id: same requests, same damage). */
  seed?: string;
}
