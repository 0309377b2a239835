/**
 * Error families of the voice platform. The spec gives each group of operations its own codes and its
 * own use of HTTP statuses; a route names its family and every error of it is shaped from this table.
 */
export type ErrorKind = 'param' | 'auth' | 'forbidden' | 'balance' | 'rate' | 'timeout' | 'notFound' | 'internal';

export interface Family {
  /** true: errors carry an HTTP status (synthesis, recognition); false: always HTTP 200 with the envelope. */
  httpStatuses: boolean;
  codes: Partial<Record<ErrorKind, number>> & { param: number; auth: number; internal: number };
}

const standard = { param: 10001, auth: 10003, balance: 20003, rate: 10014, internal: 10000 };

export const FAMILIES = {
  tts: { httpStatuses: true, codes: { ...standard } },
  recognition: { httpStatuses: true, codes: { ...standard } },
  voice: { httpStatuses: false, codes: { ...standard } },
  upload: { httpStatuses: false, codes: { ...standard, rate: 10005 } },
  podcast: { httpStatuses: false, codes: { ...standard, timeout: 10006 } },
  detection: { httpStatuses: false, codes: { ...standard } },
  diarization: { httpStatuses: false, codes: { ...standard } },
  agent: { httpStatuses: false, codes: { ...standard, forbidden: 10004, notFound: 10002 } },
  call: { httpStatuses: false, codes: { param: 20003, auth: 20001, balance: 40011, internal: 50000 } },
} satisfies Record<string, Family>;

export type FamilyName = keyof typeof FAMILIES;

/** HTTP status of an error code in families that use statuses (README, "Voice platform service"). */
export function httpStatusOfCode(code: number): number {
  switch (code) {
    case 10001:
    case 20014:
      return 400;
    case 10003:
      return 401;
    case 20003:
      return 402;
    case 10014:
    case 10005:
      return 429;
    default:
      return 500;
  }
}

/** Code of an HTTP status (the `status=N` fault): 400 → param, 401 → auth, 402 → balance, 429 → rate, else internal. */
export function codeOfHttpStatus(family: Family, status: number): number {
  const c = family.codes;
  if (status === 400) return c.param;
  if (status === 401) return c.auth;
  if (status === 403) return c.forbidden ?? c.auth;
  if (status === 402) return c.balance ?? c.internal;
  if (status === 404) return c.notFound ?? c.param;
  if (status === 429) return c.rate ?? c.internal;
  if (status === 408 || status === 504) return c.timeout ?? c.internal;
  return c.internal;
}

/** The paths of the call family (calls and REST sessions), and of /mcp (JSON-RPC, no family). */
export const CALL_PATHS = /^\/(api\/v1\/audio|v1\/audio\/assistant)(\/|\?|$)/;
export const MCP_PATHS = /^\/mcp(\/|\?|$)/;
const VOICE_PATHS = /^\/v1\/voice(\/|\?|$)/;

/**
 * The family of a URL read before any route matched (a URL the router cannot read, a request the parser refuses):
 * the call family's and the voice family's paths by their prefix, every other path the standard codes with statuses.
 */
export function familyOfPath(url: string | undefined): Family {
  if (url === undefined) return FAMILIES.tts;
  if (CALL_PATHS.test(url)) return FAMILIES.call;
  return VOICE_PATHS.test(url) ? FAMILIES.voice : FAMILIES.tts;
}
