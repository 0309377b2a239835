/**
 * Long audio work shares the process: `nextTurn` lets other requests run between two slices of it,
 * and `deferred` is a result that a stream settles once its last chunk is made.
 */

/** Resolves on the next turn of the event loop (after pending I/O). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise with its settle functions; a rejection nobody awaits is not reported as unhandled. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
