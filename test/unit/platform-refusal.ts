// What a platform model refused, matched as the wire will carry it: the model's kind (or code), the code
// the route's family turns it into, and the whole message text.
import { expect } from 'vitest';
import { PlatformError, resolveCode } from '../../src/services/platform/envelope.js';
import { FAMILIES, type ErrorKind, type FamilyName } from '../../src/services/platform/families.js';

export interface Refusal {
  family: FamilyName;
  codeOrKind: ErrorKind | number;
  /** The envelope's error_code under that family. */
  code: number;
  message: string | RegExp;
}

export function expectRefusal(err: unknown, want: Refusal): void {
  expect(err).toBeInstanceOf(PlatformError);
  const refusal = err as PlatformError;
  if (typeof want.message === 'string') expect(refusal.message).toBe(want.message);
  else expect(refusal.message).toMatch(want.message);
  expect(refusal.codeOrKind).toBe(want.codeOrKind);
  expect(resolveCode(FAMILIES[want.family], refusal.codeOrKind)).toBe(want.code);
}

/** A refusal's text, for the order tests that fix one field at a time. */
export function messageOf(err: unknown): string {
  expect(err).toBeInstanceOf(PlatformError);
  return (err as PlatformError).message;
}
