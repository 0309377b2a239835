/**
 * The platform's envelope `{error_code, error_message, succeed, data}` and its errors. Models throw
 * PlatformError with a kind (`param`, `balance`…) or an explicit code; the route's family shapes it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { noteSpecCode, sendJson } from '../../core/http/request-context.js';
import { FAMILIES, httpStatusOfCode, type ErrorKind, type Family, type FamilyName } from './families.js';
import { ExpectedError } from '../../core/http/expected-error.js';

export interface Envelope<T> {
  error_code: number;
  error_message: string;
  succeed: boolean;
  data: T | null;
}

export function ok<T>(data: T, message = ''): Envelope<T> {
  return { error_code: 0, error_message: message, succeed: true, data };
}

export function failure(code: number, message: string): Envelope<null> {
  return { error_code: code, error_message: message, succeed: false, data: null };
}

export class PlatformError extends ExpectedError {
  constructor(
    /** An error kind resolved by the route's family, or an explicit spec code. */
    readonly codeOrKind: ErrorKind | number,
    message: string,
    /** Overrides the family's HTTP status (e.g. 413 or 405 of detection). */
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error family of the route: decides the codes and HTTP statuses of its errors. */
    family?: FamilyName;
  }
}

export function familyOf(req: FastifyRequest): Family {
  // The lifecycle noted the route's config (reading req.routeOptions builds a new object every time).
  const name = (req.ctx?.routeConfig ?? req.routeOptions?.config)?.family;
  return (name && FAMILIES[name]) || FAMILIES.voice;
}

export function resolveCode(family: Family, codeOrKind: ErrorKind | number): number {
  if (typeof codeOrKind === 'number') return codeOrKind;
  return family.codes[codeOrKind] ?? (codeOrKind === 'notFound' || codeOrKind === 'forbidden' ? family.codes.param : family.codes.internal);
}

/** Sends an error in the family's shape: the envelope, with HTTP 200 or the status of its code. */
export function sendPlatformError(req: FastifyRequest, reply: FastifyReply, err: PlatformError): FastifyReply {
  const family = familyOf(req);
  const code = resolveCode(family, err.codeOrKind);
  const status = err.httpStatus ?? (family.httpStatuses ? httpStatusOfCode(code) : 200);
  noteSpecCode(req, code, err.message);
  return sendJson(reply, status, failure(code, err.message));
}
