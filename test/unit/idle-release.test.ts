import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { releaseMemoryWhenIdle, type Release } from '../../src/core/idle-release.js';
import { Journal } from '../../src/core/journal/journal.js';
import { Sockets } from '../../src/core/socket/open-sockets.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the release reads of an emulator: its journal (activity, open streams) and its open sockets. */
function host() {
  const journal = new Journal(100);
  const sockets = new Sockets();
  return { journal, sockets, emu: { journal, sockets } as unknown as Emulator };
}

describe('memory is given back only when the emulator is idle', () => {
  const IDLE = 200;

  it('never before the first activity, once after it, and not while a call client is connected', async () => {
    const { journal, sockets, emu } = host();
    const releases: Release[] = [];
    const stop = releaseMemoryWhenIdle(emu, IDLE, (r) => releases.push(r));
    try {
      await sleep(IDLE * 3);
      expect(releases).toHaveLength(0);
      // A call client: its audio goes over UDP, past the journal; the emulator is busy while it is there.
      const call = sockets.add({ accountId: null, path: '/rtc', openedAtMs: 0, close: () => undefined, media: true });
      journal.start({ at_ms: 0, service: 'platform', method: 'GET', path: '/rtc', account: null, request: { headers: {} }, response: {} });
      await sleep(IDLE * 3);
      expect(releases).toHaveLength(0);
      // A socket open without media and silent does not keep it busy.
      sockets.add({ accountId: null, path: '/ws/v1/t2a_v2', openedAtMs: 0, close: () => undefined });
      sockets.remove(call);
      for (let i = 0; i < 20 && releases.length === 0; i++) await sleep(IDLE);
      expect(releases).toHaveLength(1);
      expect(releases[0]!.ms).toBeGreaterThanOrEqual(0);
      await sleep(IDLE * 3);
      expect(releases).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('0 turns it off', async () => {
    const { journal, emu } = host();
    const releases: Release[] = [];
    const stop = releaseMemoryWhenIdle(emu, 0, (r) => releases.push(r));
    journal.start({ at_ms: 0, service: 'platform', method: 'GET', path: '/x', account: null, request: { headers: {} }, response: {} });
    await sleep(300);
    stop();
    expect(releases).toHaveLength(0);
  });
});
