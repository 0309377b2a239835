/**
 * What the control client throws. Every failure is a ControlClientError naming the URL called and
 * what came back: the control plane's refusal (a status other than 2xx, with its own message), an
 * answer that is not what the method expects (HTML, `null`: the wrong URL), or no whole answer at all
 * (no connection, the deadline; status 0). A verification that does not hold (409) is a
 * VerificationError whose message lists the nearest misses.
 */
import type { BudgetResult, JournalEntryView, VerifyFailure } from './types.js';

export class ControlClientError extends Error {
  override readonly name: string = 'ControlClientError';
  /** What went wrong alone, without the request and status. */
  readonly detail: string;
  constructor(
    /** The HTTP status of the answer; 0 when no whole answer came (no connection, the deadline). */
    readonly status: number,
    /** The control plane's message (`error.message`), or what came back instead. */
    message: string,
    /** The parsed JSON answer, or its text when it was not JSON (undefined when none came). */
    readonly body: unknown,
    /** The request, as `METHOD /_emulator/...`. */
    readonly request: string,
    /** The whole URL called. */
    readonly url: string = '',
    /** More lines for the message (a verification's nearest misses), not part of `detail`. */
    more = '',
  ) {
    const method = request.split(' ')[0];
    super(`${url ? `${method} ${url}` : request}: ${status ? `${status} ` : ''}${message}${more}`);
    this.detail = message;
  }
}

/** The nearest misses shown in a VerificationError's message. */
const SHOWN_MISSES = 3;

/** One near miss on a line: which entry, and how it differs. */
function missLine(miss: { differences: string[]; entry: JournalEntryView }): string {
  const e = miss.entry;
  return `  - ${e.method} ${e.path} (${e.id}, status ${e.status ?? 'none'}): ${miss.differences.join('; ')}`;
}

export class VerificationError extends ControlClientError {
  override readonly name: string = 'VerificationError';
  readonly count: number;
  readonly expected: string;
  readonly nearMisses: { differences: string[]; entry: JournalEntryView }[];
  /** The budgets asked, as checked, when the count held and a budget did not. */
  readonly budgets: BudgetResult[] | undefined;
  constructor(status: number, message: string, body: VerifyFailure, request: string, url = '') {
    const misses = body.near_misses ?? [];
    const shown = misses.slice(0, SHOWN_MISSES).map(missLine);
    const more = misses.length > SHOWN_MISSES ? [`  (and ${misses.length - SHOWN_MISSES} more in nearMisses)`] : [];
    // A budget broken lists the requests over it; a count that did not hold, the nearest misses.
    const heading = body.budgets ? (misses.length === 1 ? 'over budget' : 'over budget, worst first') : `nearest ${misses.length === 1 ? 'miss' : 'misses'}`;
    const why = misses.length ? `\n${heading}:\n${[...shown, ...more].join('\n')}` : body.budgets ? '' : '\nno request in the journal to compare with';
    super(status, message, body, request, url, why);
    this.count = body.count;
    this.expected = body.expected;
    this.nearMisses = misses;
    this.budgets = body.budgets;
  }
}
