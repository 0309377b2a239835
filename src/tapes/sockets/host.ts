/**
 * What the socket tapes read of the running emulator and its tape settings, and the small helpers recording and
 * replay share: the request as a tape keeps it (credentials replaced by the marker), ids of a failure event, tape ids.
 */
import type { FastifyRequest } from 'fastify';
import type { Emulator } from '../../core/emulator.js';
import { CREDENTIAL_MARKER, type Tape, type TapeRequest } from '../format.js';
import type { TapeStore } from '../store.js';
import type { FailureIds } from './kinds.js';

export interface SocketTapesHost {
  readonly emu: Emulator;
  /** Where sockets are recorded (`--record`), or null. */
  readonly recordStore: TapeStore | null;
  /** The tapes replayed (`--replay`, or the record dir under `record-missing`), or null. */
  readonly replayStore: TapeStore | null;
  /** `record` forwards every socket; `record-missing` replays what matches and records the rest. */
  readonly recordMode: 'record' | 'record-missing' | null;
  /** A tape recorded holds the account of the key and answers only it (`--record-per-account`). */
  readonly perAccount: boolean;
  /** How much faster than recorded a tape is played (1: as recorded). */
  readonly replaySpeed: number;
  /** A socket no tape matches gets the family's error instead of the emulator's own socket. */
  readonly strict: boolean;
  /** The upstream base URL of a listener, when one is set. */
  upstreamOf(listener: string): string | undefined;
  /** A socket tape was written under `record-missing`: it answers the next such socket. */
  recorded(tape: Tape): void;
  /** A tape answered (what `tapes prune` keeps). */
  used(id: string): void;
  /** The secret header value that lets a fall-through reach the emulator's own socket. */
  readonly pass: string;
}

/** The header that carries `SocketTapesHost.pass` on a fall-through's own connection. */
export const PASS_HEADER = 'x-emulator-tape-pass';

/** Headers and query parameters that carry a key: written as the marker, never as the key. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key']);
const CREDENTIAL_QUERY = new Set(['api_key', 'apikey', 'key', 'token', 'access_token']);

/** The socket's request as a tape keeps it: the path, the query and the headers that carry a key, with the key replaced. */
export function socketRequest(req: FastifyRequest): TapeRequest {
  const url = new URL(req.url, 'http://x');
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name).map((v) => (CREDENTIAL_QUERY.has(name.toLowerCase()) ? CREDENTIAL_MARKER : v));
    query[name] = values.length === 1 ? values[0]! : values;
  }
  const headers: Record<string, string> = {};
  for (const name of CREDENTIAL_HEADERS) {
    const value = req.headers[name];
    if (typeof value !== 'string') continue;
    headers[name] = CREDENTIAL_MARKER;
  }
  return { method: 'GET', path: url.pathname, query, headers, body: { none: true } };
}

/** The ids a failure event carries on a socket that has none of its own yet: from the account's seeded stream. */
export function failureIds(emu: Emulator, req: FastifyRequest): FailureIds {
  const account = req.ctx?.account?.id ?? 'anonymous';
  return { sessionId: fifteenDigits(emu, account), traceId: emu.ids.traceId(account) };
}

/** A 15-digit id as the speech service prints them. */
export function fifteenDigits(emu: Emulator, account: string): string {
  return String(100_000_000_000_000 + Math.floor(emu.ids.stream(account).next() * 899_999_999_999_999));
}
