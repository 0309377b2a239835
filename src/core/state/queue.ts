import { availableParallelism } from 'node:os';

/**
 * Bounds how many syntheses run at once (each holds its samples and encoder buffers): with many
 * concurrent clients the rest wait their turn in arrival order instead of all growing memory at once.
 * A waiter whose client leaves (its signal aborts) leaves the line without ever taking a slot.
 */
export class SlotQueue {
  private running = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('a queue needs at least one slot');
  }

  /** Slots sized from the machine: synthesis is CPU work, a few per core keep it busy. */
  static forCores(): SlotQueue {
    return new SlotQueue(Math.max(4, 2 * availableParallelism()));
  }

  /**
   * Resolves with `release` once a slot is free (FIFO). `release` is idempotent: call it when the
   * work ends, however it ends. Rejects with the signal's reason if it aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i !== -1) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** A slot to take for one synthesis and free once (see HeldSlot). */
  slot(): HeldSlot {
    return new HeldSlot(this);
  }

  /** Runs `work` in a slot and frees it when the work settles. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Syntheses running and waiting now (for statistics and tests). */
  stats(): { limit: number; running: number; waiting: number } {
    return { limit: this.limit, running: this.running, waiting: this.waiting.length };
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next in line; `running` only drops when nobody waits.
      if (next) next.grant();
      else this.running--;
    };
  }
}

/**
 * One synthesis's slot, freed once: early, when a paced stream starts waiting (no slot is held while
 * a stream waits for its pace), or when the work ends, whichever comes first. Freeing a slot not taken
 * yet does nothing.
 */
export class HeldSlot {
  private release: (() => void) | null = null;

  constructor(private readonly queue: SlotQueue) {}

  /** Waits for a slot (FIFO); rejects with the signal's reason if it aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    this.release = await this.queue.acquire(signal);
  }

  /** Frees the slot if it is held (a function of its own: it is handed on as a callback). */
  readonly free = (): void => {
    const release = this.release;
    this.release = null;
    release?.();
  };
}
