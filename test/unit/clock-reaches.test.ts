/**
 * `Clock.reaches`: the wait of a paced stream on the emulator clock, which must end when the client
 * leaves, even when it left before the wait began.
 */
import { describe, expect, it } from 'vitest';
import { Clock } from '../../src/core/state/clock.js';

function frozenClock(atMs = 1_000_000): Clock {
  const clock = new Clock(() => atMs);
  clock.freeze(true);
  return clock;
}

describe('Clock.reaches', () => {
  it('is true at once when the clock already stands at or past the time', async () => {
    const clock = frozenClock();
    expect(await clock.reaches(clock.now(), new AbortController().signal)).toBe(true);
    expect(clock.pending()).toEqual([]);
  });

  it('is true once the clock is moved to the time, and leaves no timer', async () => {
    const clock = frozenClock();
    const waiting = clock.reaches(clock.now() + 5_000, new AbortController().signal, 'pace');
    expect(clock.pending().map((t) => t.label)).toEqual(['pace']);
    clock.advance(5_000);
    expect(await waiting).toBe(true);
    expect(clock.pending()).toEqual([]);
    clock.stop();
  });

  it('is false when the signal aborts during the wait, and its timer is gone', async () => {
    const clock = frozenClock();
    const left = new AbortController();
    const waiting = clock.reaches(clock.now() + 5_000, left.signal);
    left.abort();
    expect(await waiting).toBe(false);
    expect(clock.pending()).toEqual([]);
  });

  it('is false at once when the signal aborted before the wait began (no abort event comes again)', async () => {
    const clock = frozenClock();
    const left = new AbortController();
    left.abort();
    const outcome = await Promise.race([clock.reaches(clock.now() + 5_000, left.signal), new Promise((r) => setTimeout(() => r('still waiting'), 200))]);
    expect(outcome).toBe(false);
    expect(clock.pending()).toEqual([]);
  });
});
