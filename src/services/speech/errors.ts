/**
 * The speech service's error shape (addendum A2): HTTP 200 once a request reached the operation,
 * `{"base_resp":{"status_code","status_msg"},"trace_id"}` and a `Trace-Id` header equal to the body's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Capability } from '../../core/state/accounts.js';
import type { KeyTexts, Refusal } from '../../core/http/admission.js';
import type { BodyError } from '../../core/http/body-errors.js';
import type { Emulator } from '../../core/emulator.js';
import { ExpectedError } from '../../core/http/expected-error.js';
import { noteSpecCode } from '../../core/http/request-context.js';

const LOGIN_MISSING = "login fail: Please carry the API secret key in the 'Authorization' field of the request header";

/**
 * The text of each documented code (speech-beyond.md 7.1, speech-current.md 9.1): what an error of
 * that code says, and what a fault `code=N` answers. Where the official page gives two texts, the
 * first; the socket codes use the WebSocket page's words.
 */
export const STATUS_MSG: Record<number, string> = {
  0: 'success',
  1000: 'unknown error',
  1001: 'request timeout',
  1002: 'rate limit exceeded(RPM)',
  1004: LOGIN_MISSING,
  1008: 'insufficient balance',
  1013: 'internal service error',
  1024: 'internal error',
  1026: 'input new_sensitive',
  1027: 'output new_sensitive',
  1033: 'system error',
  1039: 'token limit',
  1041: 'conn limit',
  1042: 'invisible character ratio limit',
  1043: 'The asr similarity check failed',
  1044: 'clone prompt similarity check failed',
  2013: 'invalid params',
  20132: 'invalid samples or voice_id',
  2037: 'voice duration too short',
  2038: 'user voice clone forbidden, should complete real-name verification',
  2039: 'voice clone voice id duplicate',
  2042: "You don't have access to this voice_id",
  2045: 'rate growth limit',
  2048: 'prompt audio too long',
  2049: 'invalid api key',
  2054: 'voice id not exist',
  2056: 'usage limit exceeded',
  2201: 'timeout disconnect',
  2202: 'illegal event',
  2203: 'empty text, skipped',
  2204: 'character limit exceeded, skipped',
  2205: 'request limit exceeded',
  2206: 'illegal event order',
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

/** 1008: the balance does not cover the request. */
export function insufficientBalance(): SpeechError {
  return new SpeechError(1008);
}

/** 1002: the account's requests-per-minute window is full. */
export function rateLimited(): SpeechError {
  return new SpeechError(1002);
}

/** 1039: the account's characters-per-minute window is full. */
export function tokenLimit(): SpeechError {
  return new SpeechError(1039);
}

/** 1042: too many invisible characters in the text. */
export function textRatioLimit(): SpeechError {
  return new SpeechError(1042);
}

/** 2054 `voice id not exist: <where>`. */
export function voiceNotFound(where: string): SpeechError {
  return new SpeechError(2054, `voice id not exist: ${where}`);
}

/** Trace id of the request, minted once from the account's seeded stream. */
/**
 * The real service's answers carry the trace id a second time, as `Minimax-Request-Id` (LiveKit's
 * Python plugin reads `Trace-Id`, then `X-Trace-Id`, then this one). Every speech answer that has a
 * `Trace-Id` gets it (the app's send hook; streams set it before their head leaves).
 */
export const REQUEST_ID_HEADER = 'Minimax-Request-Id';

export function traceIdOf(emu: Emulator, req: FastifyRequest): string {
  if (!req.ctx.traceId) req.ctx.traceId = emu.ids.traceId(req.ctx.account?.id ?? 'anonymous');
  return req.ctx.traceId;
}

export function sendSpeechError(emu: Emulator, req: FastifyRequest, reply: FastifyReply, err: SpeechError): FastifyReply {
  const traceId = traceIdOf(emu, req);
  noteSpecCode(req, err.code, err.message);
  return reply.code(err.httpStatus).header('Trace-Id', traceId).header('content-type', 'application/json; charset=utf-8').send(errorBody(traceId, err));
}

/**
 * `{"data":null,"trace_id":…,"base_resp":{"status_code":…,"status_msg":…}}`, the bytes JSON.stringify
 * gives for that object, written out: no object is built for every refused request.
 */
function errorBody(traceId: string, err: SpeechError): string {
  const code = Number.isFinite(err.code) ? String(err.code) : 'null';
  return `{"data":null,"trace_id":${JSON.stringify(traceId)},"base_resp":{"status_code":${code},"status_msg":${JSON.stringify(err.message)}}}`;
}

/** The `status=N` fault: HTTP N with a base_resp code that fits it (docs/speech.md, Order of checks). */
export function codeForHttpStatus(status: number): number {
  if (status === 429) return 1002;
  if (status === 504 || status === 408) return 1001;
  if (status === 401 || status === 403) return 1004;
  return 1000;
}

/** Key texts of the speech service (the key travels in `Authorization: Bearer`). */
const LOGIN_FAIL: KeyTexts = {
  missing: LOGIN_MISSING,
  invalid: 'login fail: the API secret key in the Authorization header is not valid',
  disabled: 'login fail: the API secret key in the Authorization header is disabled',
};

/** How a refused capability is named in the 1004 text. */
const CAPABILITY_NAMES: Partial<Record<Capability, string>> = { tts: 'speech synthesis', cloning: 'voice cloning' };

/** A refusal of the admission path (core/http/admission.ts) in the speech service's shape, for every speech operation. */
export function refusalError(refusal: Refusal): SpeechError {
  switch (refusal.kind) {
    case 'fault_code':
      return new SpeechError(refusal.code, STATUS_MSG[refusal.code] ?? STATUS_MSG[1000]);
    case 'fault_status':
      return new SpeechError(codeForHttpStatus(refusal.status), undefined, refusal.status);
    case 'key':
      return new SpeechError(1004, LOGIN_FAIL[refusal.problem]);
    case 'capability':
      return new SpeechError(
        1004,
        `login fail: the API secret key has no access to ${CAPABILITY_NAMES[refusal.capability] ?? 'this operation'} (capability ${refusal.capability})`,
      );
    case 'upstream':
      return new SpeechError(codeForHttpStatus(refusal.status), refusal.message, refusal.status);
    case 'close_ws':
      // HTTP operations never take `close_ws`.
      return new SpeechError(1000);
  }
}

/** The speech service's wording of a body the framework could not read (2013, addendum A2). */
export function bodyError(err: BodyError): SpeechError {
  switch (err.kind) {
    case 'too_large':
      return invalidParams('request body exceeds the 1 MB limit');
    case 'media_type':
      return invalidParams('Content-Type must be application/json');
    case 'empty':
      return invalidParams('request body is empty');
    case 'bad_json':
      return invalidParams(`request body is not valid JSON (${err.detail})`);
  }
}
