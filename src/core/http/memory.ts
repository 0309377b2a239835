/**
 * Bounded memory while a large body streams through, and memory given back after a load.
 *
 * Each chunk a socket reads is a buffer outside V8's heap, freed only when the small object that holds
 * it is collected. A streamed upload makes little garbage inside the heap, so V8's young generation
 * (16 MB by default) fills slowly and tens of megabytes of read chunks wait for a collection that the
 * heap itself does not ask for yet. A young-generation collection costs well under a millisecond with
 * the little an upload keeps alive, so a stream asks for one every few megabytes.
 *
 * The collector comes from V8's `gc` extension, switched on for new contexts only: the process's own
 * global object gets no `gc`, and a user who started Node with `--expose-gc` keeps theirs.
 */
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collector = (options: { type: 'minor' | 'major'; execution?: 'sync'; flavor?: 'regular' | 'last-resort' }) => void;

let collector: Collector | null | undefined;

function collectorOf(): Collector | null {
  if (collector !== undefined) return collector;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : null') as Collector | null;
    collector = gc;
  } catch {
    collector = null;
  }
  return collector;
}

/** Bytes read between two young-generation collections. */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * Counts the bytes a stream has read and collects the young generation every `COLLECT_EVERY_BYTES`,
 * so the chunks already written out are freed while the stream is still running.
 */
export function chunkReleaser(): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < COLLECT_EVERY_BYTES) return;
    since = 0;
    collectorOf()?.({ type: 'minor' });
  };
}

/**
 * A collection that gives memory back to the system: V8's "last resort" (full collections until nothing
 * more is freed, then the heap pages pooled for reuse are unmapped). An ordinary full collection frees
 * objects but keeps their pages, so RSS stays at the heap's largest size. Takes 100–300 ms on 2 cores
 * with what an idle emulator keeps (longer with a full journal); answers whether it ran.
 */
export function giveMemoryBack(): boolean {
  const gc = collectorOf();
  gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return gc !== null;
}

/** A sink that drops what it is given (an unwanted or refused part of an upload), as memory-bounded as a stored one. */
export function discardStream(): Writable {
  const release = chunkReleaser();
  return new Writable({
    write: (chunk: Buffer, _enc, done) => {
      release(chunk.length);
      done();
    },
  });
}
