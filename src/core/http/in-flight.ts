/**
 * Requests whose answer is still being written: a count the idle release reads (core/idle-release.ts).
 * An answer's response always closes (answered, cut, or its client gone), unlike a journal entry, which a
 * clear or the journal's limit may drop while its stream is still running.
 */
import type { ServerResponse } from 'node:http';

export class InFlight {
  private open = 0;

  get count(): number {
    return this.open;
  }

  /** Counts `res` until it closes. */
  track(res: ServerResponse): void {
    this.open++;
    res.once('close', () => this.open--);
  }
}
