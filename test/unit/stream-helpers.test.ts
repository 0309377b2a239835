// What the streaming transports share beside the guard: one synthesis slot freed once, and the audio
// made so far with the new audio each frame carries.
import { describe, expect, it } from 'vitest';
import { SlotQueue } from '../../src/core/state/queue.js';
import { AudioMade } from '../../src/core/stream/shaping.js';

async function* blocks(...lengths: number[]): AsyncGenerator<Int16Array> {
  for (const n of lengths) yield new Int16Array(n);
}

describe('a held synthesis slot', () => {
  it('is freed once, early or at the end; the next in line gets it then', async () => {
    const queue = new SlotQueue(1);
    const first = queue.slot();
    await first.take();
    const second = queue.slot();
    let granted = false;
    const waiting = second.take().then(() => (granted = true));
    await Promise.resolve();
    expect(granted).toBe(false);
    first.free();
    await waiting;
    expect(queue.stats()).toEqual({ limit: 1, running: 1, waiting: 0 });
    // Freed again (the work's end after an early free): nothing more is released.
    first.free();
    expect(queue.stats()).toEqual({ limit: 1, running: 1, waiting: 0 });
    second.free();
    expect(queue.stats()).toEqual({ limit: 1, running: 0, waiting: 0 });
  });

  it('freed before it was taken does nothing: taken later, it is held until freed', async () => {
    const queue = new SlotQueue(1);
    const slot = queue.slot();
    slot.free();
    await slot.take();
    expect(queue.stats().running).toBe(1);
    slot.free();
    expect(queue.stats().running).toBe(0);
  });

  it('a client that leaves while it waits leaves the line without a slot', async () => {
    const queue = new SlotQueue(1);
    await queue.slot().take();
    const ac = new AbortController();
    const waiting = queue.slot().take(ac.signal);
    ac.abort(new Error('client disconnected'));
    await expect(waiting).rejects.toThrow('client disconnected');
    expect(queue.stats()).toEqual({ limit: 1, running: 1, waiting: 0 });
  });
});

describe('the audio made', () => {
  it('counts the sample frames handed on (stereo: two samples a frame) and hands the blocks on unchanged', async () => {
    const made = new AudioMade(8000, 2);
    const seen: number[] = [];
    for await (const block of made.counting(blocks(1600, 800))) {
      seen.push(block.length);
      if (seen.length === 1) expect(made.ms).toBe(100);
    }
    expect(seen).toEqual([1600, 800]);
    expect(made.ms).toBe(150);
  });

  it('each frame carries the audio made since the last one; a frame with nothing new carries 0', () => {
    const made = new AudioMade(24_000, 1);
    expect(made.newMs(40)).toBe(40);
    expect(made.newMs(100)).toBe(60);
    expect(made.newMs(100)).toBe(0);
    expect(made.newMs(90)).toBe(0);
    expect(made.newMs(120)).toBe(20);
  });
});
