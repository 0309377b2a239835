import type { ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { InFlight } from '../../src/core/http/in-flight.js';
import { releaseMemoryWhenIdle, type Release } from '../../src/core/idle-release.js';
import { Journal } from '../../src/core/journal/journal.js';
import { Sockets } from '../../src/core/socket/open-sockets.js';

const IDLE = 1000;
const MB = 1024 * 1024;

/** What the release reads of an emulator: its journal (activity), requests being answered, open sockets, the metrics it tells. */
function host() {
  const journal = new Journal(100);
  const sockets = new Sockets();
  const inFlight = new InFlight();
  let releases = 0;
  const metrics = { idleRelease: () => void releases++ };
  const emu = { journal, sockets, inFlight, metrics } as unknown as Emulator;
  // The collection is counted, never run: RSS is what the test says.
  let rss = 100 * MB;
  const done: Release[] = [];
  const start = () =>
    releaseMemoryWhenIdle(emu, IDLE, {
      released: (r) => done.push(r),
      collect: () => ((rss = 110 * MB), true),
      rss: () => rss,
    });
  const request = () => journal.start({ at_ms: 0, service: 'platform', method: 'GET', path: '/x', account: null, request: { headers: {} }, response: {} });
  return { journal, sockets, inFlight, done, start, request, grow: (mb: number) => (rss += mb * MB), metricCount: () => releases };
}

describe('memory is given back only when the emulator is idle', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never before the first activity; once after it; again only after new activity', () => {
    const h = host();
    const stop = h.start();
    h.grow(100);
    vi.advanceTimersByTime(IDLE * 5);
    expect(h.done).toHaveLength(0);
    h.request();
    vi.advanceTimersByTime(IDLE / 2);
    expect(h.done).toHaveLength(0);
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toEqual([{ rssBeforeMb: 200, rssAfterMb: 110, ms: expect.any(Number) }]);
    expect(h.metricCount()).toBe(1);
    vi.advanceTimersByTime(IDLE * 5);
    expect(h.done).toHaveLength(1);
    // A frame on a socket is activity too.
    h.grow(50);
    h.journal.recordFrame(null, { dir: 'in', type: 'text', size: 2, at_ms: 0 });
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(2);
    stop();
    h.request();
    h.grow(50);
    vi.advanceTimersByTime(IDLE * 5);
    expect(h.done).toHaveLength(2);
  });

  it('not while a request is being answered, even one the journal no longer holds (a long stream)', () => {
    const h = host();
    const stop = h.start();
    h.grow(100);
    h.request();
    const res = new EventEmitter() as unknown as ServerResponse;
    h.inFlight.track(res);
    h.journal.clear();
    vi.advanceTimersByTime(IDLE * 5);
    expect(h.done).toHaveLength(0);
    res.emit('close');
    expect(h.inFlight.count).toBe(0);
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(1);
    stop();
  });

  it('not while a call client is connected; a silent socket without media does not keep it busy', () => {
    const h = host();
    const stop = h.start();
    h.grow(100);
    const call = h.sockets.add({ accountId: null, path: '/rtc', openedAtMs: 0, close: () => undefined, media: true });
    h.request();
    vi.advanceTimersByTime(IDLE * 5);
    expect(h.done).toHaveLength(0);
    h.sockets.add({ accountId: null, path: '/ws/v1/t2a_v2', openedAtMs: 0, close: () => undefined });
    h.sockets.remove(call);
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(1);
    stop();
  });

  it('skips a release with little to give back (a client that comes back after each wait)', () => {
    const h = host();
    const stop = h.start();
    h.grow(100);
    h.request();
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(1);
    // 110 MB after the release; 8 MB more is not worth a collection.
    h.grow(8);
    h.request();
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(1);
    h.grow(20);
    h.request();
    vi.advanceTimersByTime(IDLE * 2);
    expect(h.done).toHaveLength(2);
    stop();
  });

  it('responses are counted only once the release runs (an emulator without it adds nothing to its requests)', () => {
    const inFlight = new InFlight();
    const res = new EventEmitter() as unknown as ServerResponse;
    inFlight.track(res);
    expect(inFlight.count).toBe(0);
    expect((res as unknown as EventEmitter).listenerCount('close')).toBe(0);
    inFlight.start();
    inFlight.track(res);
    expect(inFlight.count).toBe(1);
    (res as unknown as EventEmitter).emit('close');
    expect(inFlight.count).toBe(0);
  });

  it('0 turns it off: no timer at all', () => {
    const stop = releaseMemoryWhenIdle({} as Emulator, 0);
    expect(vi.getTimerCount()).toBe(0);
    stop();
  });
});
