import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Emulator } from '../../core/emulator.js';
import { ExpectedError } from '../../core/expected-error.js';

/**
 * The speech service's error shape (addendum A2): HTTP 200 once a request reached the operation,
 * `{"base_resp":{"status_code","status_msg"},"trace_id"}` and a `Trace-Id` header equal to the body's.
 */
export const STATUS_MSG: Record<number, string> = {
  0: 'success',
  1000: 'unknown error',
  1001: 'request timeout',
  1002: 'rate limit exceeded(RPM)',
  1004: "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
  1008: 'insufficient balance',
  1039: 'token limit',
  1042: 'invisible character ratio limit',
  2013: 'invalid params',
  2049: 'invalid api key',
  2054: 'voice id not exist',
};

export class SpeechError extends ExpectedError {
  constructor(
    readonly code: number,
    message?: string,
    readonly httpStatus = 200,
  ) {
    super(message ?? STATUS_MSG[code] ?? 'unknown error');
  }
}

/** `invalid params, <detail>`: the 2013 text real clients match on. */
export function invalidParams(detail: string): SpeechError {
  return new SpeechError(2013, `invalid params, ${detail}`);
}

/** Trace id of the request, minted once from the account's seeded stream. */
export function traceIdOf(emu: Emulator, req: FastifyRequest): string {
  if (!req.emu.traceId) req.emu.traceId = emu.ids.traceId(req.emu.account?.id ?? 'anonymous');
  return req.emu.traceId;
}

export function sendSpeechError(emu: Emulator, req: FastifyRequest, reply: FastifyReply, err: SpeechError): FastifyReply {
  const traceId = traceIdOf(emu, req);
  const body = { data: null, trace_id: traceId, base_resp: { status_code: err.code, status_msg: err.message } };
  return reply
    .code(err.httpStatus)
    .header('Trace-Id', traceId)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(body));
}

/** The `status=N` fault: HTTP N with a base_resp code that fits it (design.md). */
export function codeForHttpStatus(status: number): number {
  if (status === 429) return 1002;
  if (status === 504 || status === 408) return 1001;
  if (status === 401 || status === 403) return 1004;
  return 1000;
}
