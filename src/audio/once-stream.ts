import { deferred } from './event-loop.js';
import type { SynthStream, SynthSummary } from './types.js';

/**
 * A synthesis stream over `render`'s blocks: iterable once; `done()` settles with `summary()` when the last
 * block is out, and fails when the stream fails or is left before its end.
 */
export function onceStream(head: SynthSummary, render: () => AsyncGenerator<Int16Array>, summary: () => SynthSummary): SynthStream {
  const finished = deferred<SynthSummary>();
  let used = false;
  return {
    ...head,
    done: () => finished.promise,
    [Symbol.asyncIterator]() {
      if (used) throw new Error('a synthesis stream can be iterated only once');
      used = true;
      const gen = render();
      return {
        async next() {
          try {
            const r = await gen.next();
            if (r.done) finished.resolve(summary());
            return r;
          } catch (e) {
            finished.reject(e);
            throw e;
          }
        },
        async return() {
          await gen.return(undefined);
          finished.reject(new Error('stream closed before the end'));
          return { done: true as const, value: undefined };
        },
      };
    },
  };
}
