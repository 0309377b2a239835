/**
 * Base of errors that are answers, not faults (a bad parameter, an unknown voice): they are thrown on
 * every invalid request, so they carry no stack trace (capturing one is a large share of the cost of
 * an error answer). Unexpected errors keep theirs.
 */
export class ExpectedError extends Error {
  constructor(message?: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}
