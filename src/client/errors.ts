/**
 * What the control client throws when the control plane answers other than 2xx: the status, the
 * control plane's own message (`{error:{message}}`) and the whole answer. A verification that does
 * not hold (409) is a VerificationError carrying the count and the near misses.
 */
import type { JournalEntryView, VerifyFailure } from './types.js';

export class ControlClientError extends Error {
  override readonly name: string = 'ControlClientError';
  /** The control plane's message alone, without the request and status. */
  readonly detail: string;
  constructor(
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The control plane's message (`error.message`), or the status line when the answer had none. */
    message: string,
    /** The parsed JSON answer, or its text when it was not JSON. */
    readonly body: unknown,
    /** The request, as `METHOD /_emulator/...`. */
    readonly request: string,
  ) {
    super(`${request}: ${status} ${message}`);
    this.detail = message;
  }
}

export class VerificationError extends ControlClientError {
  override readonly name: string = 'VerificationError';
  readonly count: number;
  readonly expected: string;
  readonly nearMisses: { differences: string[]; entry: JournalEntryView }[];
  constructor(status: number, message: string, body: VerifyFailure, request: string) {
    super(status, message, body, request);
    this.count = body.count;
    this.expected = body.expected;
    this.nearMisses = body.near_misses;
  }
}
