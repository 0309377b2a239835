/**
 * Requests whose answer is still being written: a count the idle release reads (core/idle-release.ts).
 * An answer's response always closes (answered, cut, or its client gone), unlike a journal entry, which a
 * clear or the journal's limit may drop while its stream is still running. Off until the release turns
 * it on: an emulator that gives no memory back adds nothing to its requests.
 */
import type { ServerResponse } from 'node:http';

export class InFlight {
  private open = 0;
  private counting = false;

  get count(): number {
    return this.open;
  }

  /** From now on, responses are counted (one started earlier is not, nor taken off when it closes). */
  start(): void {
    this.counting = true;
  }

  /** Counts `res` until it closes, while counting. */
  track(res: ServerResponse): void {
    if (!this.counting) return;
    this.open++;
    res.once('close', () => this.open--);
  }
}
