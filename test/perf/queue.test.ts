import { describe, expect, it } from 'vitest';
import { SlotQueue } from '../../src/core/state/queue.js';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { connect, piecesOf, session, START, until } from '../speech/ws/ws-helpers.js';

describe('SlotQueue', () => {
  it('runs at most `limit` at once and grants slots in arrival order', async () => {
    const q = new SlotQueue(2);
    const started: number[] = [];
    const gates: (() => void)[] = [];
    const jobs = [0, 1, 2, 3, 4].map((i) =>
      q.run(async () => {
        started.push(i);
        await new Promise<void>((r) => gates.push(r));
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(q.stats()).toEqual({ limit: 2, running: 2, waiting: 3 });
    while (gates.length) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    // Whoever still waits is let in as soon as a slot frees; order of entry is the order of arrival.
    for (let k = 0; k < 5 && gates.length; k++) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    while (gates.length) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(jobs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(q.stats()).toEqual({ limit: 2, running: 0, waiting: 0 });
  });

  it('a waiter that leaves never takes a slot, and the line moves on (no deadlock)', async () => {
    const q = new SlotQueue(1);
    const first = await q.acquire();
    const leaving = new AbortController();
    const gone = q.acquire(leaving.signal);
    const next = q.acquire();
    leaving.abort(new Error('client left'));
    await expect(gone).rejects.toThrow('client left');
    expect(q.stats().waiting).toBe(1);
    first();
    first(); // idempotent: a second release frees nothing more
    const release = await next;
    expect(q.stats()).toEqual({ limit: 1, running: 1, waiting: 0 });
    release();
    expect(q.stats()).toEqual({ limit: 1, running: 0, waiting: 0 });
    const already = new AbortController();
    already.abort(new Error('left before'));
    await expect(q.acquire(already.signal)).rejects.toThrow('left before');
    expect(q.stats().running).toBe(0);
  });

  it('a failing job frees its slot', async () => {
    const q = new SlotQueue(1);
    await expect(q.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await q.run(async () => 7)).toBe(7);
    expect(q.stats().running).toBe(0);
  });
});

describe('synthesis slots over HTTP', () => {
  const { emu } = emulatorForFile();

  const body = (stream: boolean) => ({
    model: 'speech-02-turbo',
    text: 'Many clients at once, some of them leave early.',
    stream,
    voice_setting: { voice_id: 'male-qn-qingse' },
    audio_setting: { format: 'mp3' },
  });

  it('more concurrent syntheses than slots all answer, clients that leave free their slots', async () => {
    const limit = emu.emulator.synthesis.limit;
    const n = limit * 3;
    const leavers = Array.from({ length: limit }, () => {
      const ac = new AbortController();
      const p = fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        signal: ac.signal,
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify(body(true)),
      }).catch(() => null);
      setImmediate(() => ac.abort());
      return p;
    });
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) => call(`${emu.speechUrl}/v1/t2a_v2`, { json: body(i % 2 === 0), headers: { authorization: 'Bearer k' } })),
    );
    await Promise.all(leavers);
    for (const a of answers) {
      expect(a.status).toBe(200);
      if (a.body) expect(a.body.base_resp.status_code).toBe(0);
      else expect(a.text).toContain('"status_code":0');
    }
    // Every slot is back once the answers are out (a leaver's slot included).
    for (let i = 0; i < 100 && emu.emulator.synthesis.stats().running > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(emu.emulator.synthesis.stats()).toEqual({ limit, running: 0, waiting: 0 });
  });
});

describe('synthesis slots on the speech WebSocket', () => {
  const { emu } = emulatorForFile();

  it('a piece waits for a slot shared with HTTP T2A; a client that leaves while waiting frees its place', async () => {
    const queue = emu.emulator.synthesis;
    // Every slot taken (as by long HTTP syntheses).
    const held = await Promise.all(Array.from({ length: queue.limit }, () => queue.acquire()));
    const frames = [START, { event: 'task_continue', text: 'Waiting for a slot.' }, { event: 'task_finish' }];
    const done = session(emu.speechUrl, frames);
    await until(async () => queue.stats().waiting === 1);
    // A second client that leaves while its piece waits.
    const leaver = connect(emu.speechUrl);
    leaver.on('open', () => {
      leaver.send(JSON.stringify(START));
      leaver.send(JSON.stringify({ event: 'task_continue', text: 'I will not wait.' }));
    });
    await until(async () => queue.stats().waiting === 2);
    leaver.close();
    await until(async () => queue.stats().waiting === 1);
    held[0]!();
    const result = await done;
    const pieces = piecesOf(result.messages);
    expect(pieces).toHaveLength(1);
    expect(pieces[0]!.audio.length).toBeGreaterThan(0);
    expect(result.messages.at(-1).event).toBe('task_finished');
    for (const release of held) release();
    await until(async () => queue.stats().running === 0 && queue.stats().waiting === 0);
  });
});
