/**
 * The back-pressure step of the stream guard (core/stream/guard.ts), for a transport with a send buffer of
 * its own (a socket): while the client reads slower than the stream is made, the next frame waits.
 */
import type { StreamGuardOptions, StreamTransport } from './frames.js';
import type { Verdict } from './chunk-steps.js';

/**
 * Null while the client keeps up. Over the bound, the frame waits (its producer with it, as every producer
 * awaits its send) until the client has read enough (null: go on), or ends the stream: `stalled` when the
 * buffer stayed over the bound for `stallMs` (wall time), `left` or `shutdown` when that came first, or
 * how the stream already `ended` meanwhile.
 */
export function waitForRoom(t: StreamTransport<unknown>, options: StreamGuardOptions, ended: () => Verdict): Promise<Verdict> | null {
  const bound = options.sendBuffer;
  if (!bound || !t.buffered || !t.drained || t.buffered() <= bound.bytes) return null;
  const { gone, closing } = options;
  const until = performance.now() + bound.stallMs;
  const wait = async (): Promise<Verdict> => {
    while (t.buffered!() > bound.bytes) {
      const end = ended();
      if (end) return end;
      if (gone?.aborted) return 'left';
      if (closing?.aborted) return 'shutdown';
      const left = until - performance.now();
      if (left <= 0) return 'stalled';
      await t.drained!(left);
    }
    return null;
  };
  return wait();
}
