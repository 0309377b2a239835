/**
 * An idle emulator gives back the memory its last load used.
 *
 * V8 keeps the heap pages a load filled: once their objects are collected, the pages wait in a pool for
 * reuse and stay in RSS. Only a collection that reduces memory unmaps them, and V8's own memory reducer
 * did not start one in an idle emulator. After `npm run soak`, an emulator that started at 100 MB held
 * 350 MB, of which 160 MB were pooled pages.
 *
 * Idle means: for `idleMs`, no request or socket has started and no socket frame has gone either way,
 * no request is being answered (an HTTP stream, a long upload), and no call room has a client (a
 * collection pauses the process for 100–300 ms, which a stream's pacing or a call's audio would show
 * as a gap; a room's audio goes over UDP, past the journal). A socket left open and silent does not keep
 * the emulator busy. Then one such collection runs, and none again until the emulator has been busy.
 * Activity is read from the journal, so control-plane reads (a metrics scrape) do not re-arm it; one in
 * progress still counts as a request being answered.
 *
 * Only the CLI's process does this: an emulator started inside a test's process leaves its heap alone.
 * The wait is wall time, like delivery pacing: it is about the process, not a rule of the emulated API.
 */
import { giveMemoryBack } from './http/memory.js';
import type { Emulator } from './emulator.js';

/** What one release did, for the log. */
export interface Release {
  rssBeforeMb: number;
  rssAfterMb: number;
  ms: number;
}

/**
 * Less than this above what the last release left is not worth a collection: a client that comes back just
 * after each wait would otherwise pay one every time (and the heap would grow again after each).
 */
const WORTH_RELEASING_BYTES = 16 * 1024 * 1024;

export interface ReleaseOptions {
  /** Told of each release. */
  released?: (r: Release) => void;
  /** The collection (tests give their own): answers whether it ran. */
  collect?: () => boolean;
  /** The process's RSS in bytes (tests give their own). */
  rss?: () => number;
}

const mb = (bytes: number) => Math.round(bytes / 1048576);

/** Releases memory after `idleMs` without activity (0: never); answers the function that stops it. */
export function releaseMemoryWhenIdle(emu: Emulator, idleMs: number, options: ReleaseOptions = {}): () => void {
  if (idleMs <= 0) return () => undefined;
  const { released = () => undefined, collect = giveMemoryBack, rss = () => process.memoryUsage.rss() } = options;
  emu.inFlight.start();
  let seen = emu.journal.activity;
  let quietSince = performance.now();
  // Nothing to give back at start: the first release waits for the first activity.
  let releasedSinceBusy = true;
  let floor = rss();
  const busy = () => emu.inFlight.count > 0 || emu.sockets.list().some((s) => s.media);
  const timer = setInterval(
    () => {
      const activity = emu.journal.activity;
      if (activity !== seen || busy()) {
        seen = activity;
        quietSince = performance.now();
        releasedSinceBusy = false;
        return;
      }
      if (releasedSinceBusy || performance.now() - quietSince < idleMs) return;
      releasedSinceBusy = true;
      const before = rss();
      if (before - floor < WORTH_RELEASING_BYTES) return;
      const t0 = performance.now();
      if (!collect()) return;
      floor = rss();
      emu.metrics.idleRelease();
      released({ rssBeforeMb: mb(before), rssAfterMb: mb(floor), ms: Math.round(performance.now() - t0) });
    },
    Math.max(100, Math.min(2500, idleMs / 4)),
  ).unref();
  return () => clearInterval(timer);
}
