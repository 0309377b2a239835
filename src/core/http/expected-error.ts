/**
 * Base of errors that are answers, not faults (a bad parameter, an unknown voice): they are thrown on
 * every invalid request, so they carry no stack trace. They are Errors to every check (`instanceof
 * Error`, Fastify's handling) but never run Error's constructor, which captures the stack: that
 * capture, even an empty one, is a visible share of the cost of an error answer. Unexpected errors
 * keep theirs.
 */
export interface ExpectedError extends Error {}

/** The longest message an answer carries: a client's value quoted in it never makes an answer unbounded. */
export const MAX_MESSAGE_CHARS = 1024;

function bounded(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}… (${message.length - MAX_MESSAGE_CHARS} more characters cut)`;
}

export class ExpectedError {
  // On the prototype, as an Error's own message is not enumerable: JSON and logs show an expected error
  // as they show any error.
  #message: string;

  constructor(message?: string) {
    this.#message = message === undefined ? '' : bounded(message);
  }

  get message(): string {
    return this.#message;
  }

  set message(value: string) {
    this.#message = bounded(value);
  }

  /** What a stack would say, without frames. */
  get stack(): string {
    return `${this.name}: ${this.message}`;
  }

  set stack(value: string) {
    Object.defineProperty(this, 'stack', { value, writable: true, configurable: true });
  }
}
Object.setPrototypeOf(ExpectedError.prototype, Error.prototype);
