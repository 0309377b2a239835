import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnEmulator, type ChildEmulator } from '../helpers/child.js';

/** The CLI gives back the memory of a load once idle (src/core/idle-release.ts), and only then. */
describe('an idle CLI gives its memory back', () => {
  let emu: ChildEmulator;
  // Long enough that a stall of this test's process (other files run beside it) is not taken for quiet.
  const IDLE_MS = 2500;

  beforeAll(async () => {
    emu = await spawnEmulator(['--idle-release-ms', String(IDLE_MS)]);
  });
  afterAll(() => emu?.child.kill('SIGKILL'));

  const releases = () =>
    emu
      .output()
      .split('\n')
      .filter((l) => l.includes('idle: memory given back'))
      .map((l) => JSON.parse(l) as { rss_before_mb: number; rss_after_mb: number; ms: number });
  const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${emu.child.pid}/status`, 'utf8'))![1]) / 1024;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  async function until<T>(what: string, fn: () => T | undefined, ms = 30_000): Promise<T> {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
      const v = fn();
      if (v !== undefined) return v;
    }
    throw new Error(`${what} did not happen in ${ms} ms:\n${emu.output().slice(-2000)}`);
  }

  /** A speech socket whose 150 pieces (empty text, refused at once) each leave 3 KB of frame content in the journal. */
  const socket = () =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${emu.speechUrl.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer idle-key' } });
      ws.on('message', (data) => {
        const event = (JSON.parse(String(data)) as { event?: string }).event;
        if (event === 'connected_success')
          ws.send(JSON.stringify({ event: 'task_start', model: 'speech-02-turbo', voice_setting: { voice_id: 'male-qn-qingse' } }));
        if (event !== 'task_started') return;
        for (let i = 0; i < 150; i++) {
          const pad = (c: string) => `${c}${i}`.repeat(250).slice(0, 1000);
          ws.send(JSON.stringify({ event: 'task_continue', text: '', a: pad('a'), b: pad('b'), c: pad('c') }));
        }
        ws.send(JSON.stringify({ event: 'task_finish' }));
      });
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });

  it('not while a client talks on its socket; once the load is over and the emulator idle (a silent socket may stay open), one collection gives back the pages; again only after new work', async () => {
    for (let i = 0; i < 40; i++) await socket();
    // A socket whose client sends a frame now and then keeps the emulator busy.
    const held = new WebSocket(`${emu.speechUrl.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer idle-key' } });
    await new Promise((resolve, reject) => {
      held.on('message', (data) => {
        const event = (JSON.parse(String(data)) as { event?: string }).event;
        if (event === 'connected_success')
          held.send(JSON.stringify({ event: 'task_start', model: 'speech-02-turbo', voice_setting: { voice_id: 'male-qn-qingse' } }));
        if (event === 'task_started') resolve(undefined);
      });
      held.once('error', reject);
    });
    const talking = setInterval(() => held.send(JSON.stringify({ event: 'task_continue', text: '' })), IDLE_MS / 10);
    try {
      await sleep(IDLE_MS * 2);
      clearInterval(talking);
      expect(held.readyState).toBe(WebSocket.OPEN);
      expect(releases()).toEqual([]);
      // The journal's 18 MB of frame contents become garbage. The socket stays open, silent: that is idle.
      expect((await fetch(`${emu.speechUrl}/_emulator/reset`, { method: 'POST' })).status).toBe(200);
      const loaded = rssMb();

      const [first] = await until('a release', () => (releases().length ? releases() : undefined));
      expect(first!.rss_after_mb).toBeLessThan(first!.rss_before_mb - 10);
      expect(rssMb()).toBeLessThan(loaded - 10);
      const metrics = await (await fetch(`${emu.speechUrl}/_emulator/metrics`)).text();
      expect(metrics).toMatch(/^emulator_idle_memory_releases_total 1$/m);
      // Still idle: no second collection.
      await sleep(IDLE_MS * 2);
      expect(releases()).toHaveLength(1);
      // New work, then idle again: one more. (The pages of the first load are reused first: twice as much
      // work puts RSS well over what the release left, and a release with little to give back is skipped.)
      for (let i = 0; i < 80; i++) await socket();
      await fetch(`${emu.speechUrl}/_emulator/reset`, { method: 'POST' });
      await until('a second release', () => (releases().length === 2 ? true : undefined));
    } finally {
      clearInterval(talking);
      held.close();
    }
  }, 120_000);
});
