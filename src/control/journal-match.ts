/**
 * What selects journal entries, for `POST /_emulator/verify` and `GET /_emulator/journal` alike: the
 * fields a matcher may name, and the differences of one entry from it, each naming the field, what
 * was expected and the value seen (credentials stay redacted on both sides).
 */
import * as z from 'zod';
import { redactKey } from '../core/state/accounts.js';
import { entryCode, isSecretField, summarize, type JournalEntry } from '../core/journal/journal.js';
import { journalHeaderValue } from '../core/journal/summaries.js';
import { countOf } from '../core/http/describe.js';

/** The matcher's fields (verify's `request`; the journal query names the same ones). */
export const matcherFields = {
  service: z.enum(['speech', 'platform']).optional(),
  listener: z.enum(['speech', 'speech-backup', 'platform']).optional(),
  method: z.string().min(1).optional(),
  path: z.string().startsWith('/').optional(),
  account: z.string().optional(),
  status: z.int().min(100).max(599).optional(),
  code: z.union([z.int(), z.string().min(1)]).optional(),
  body: z.unknown().optional(),
  /** A subset of the request's headers; names compared case-insensitively, values exactly. */
  headers: z.record(z.string(), z.string()).optional(),
  /** A subset of the request's query parameters. */
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).optional(),
  /** Whether a fault was injected (by header, rule or the account's stream faults). */
  fault: z.boolean().optional(),
  /** A window on the emulator clock: `since_ms <= at_ms < until_ms`. */
  since_ms: z.int().min(0).optional(),
  until_ms: z.int().min(0).optional(),
};

/** What a matcher names (verify's `request`; the journal query gives the same fields). */
export type Matcher = z.output<ReturnType<typeof z.object<typeof matcherFields>>>;

const show = (v: unknown): string => (v === undefined ? 'none' : JSON.stringify(v));

/** The first place where `actual` is not a superset of `expected`: `path: expected X, got Y`; null when it is. */
export function firstDifference(expected: unknown, actual: unknown, path: string): string | null {
  if (expected === null || typeof expected !== 'object') {
    return Object.is(expected, actual) ? null : `${path}: expected ${show(expected)}, got ${cut(show(actual))}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${cut(show(actual))}`;
    if (actual.length !== expected.length) return `${path}: expected ${countOf(expected.length, 'item')}, got ${actual.length}`;
    for (const [i, v] of expected.entries()) {
      const d = firstDifference(v, actual[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: expected an object, got ${cut(show(actual))}`;
  for (const [k, v] of Object.entries(expected)) {
    const d = firstDifference(v, (actual as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    if (d) return d;
  }
  return null;
}

function cut(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

/** A query value as the journal keeps it: text from the URL (a number or boolean asked for matches its text), a credential redacted. */
function queryValue(expected: string | number | boolean | string[], name: string): string | string[] {
  if (Array.isArray(expected)) return expected.map((v) => queryValue(v, name) as string);
  // Summarized as the entry's query was (a credential redacted, a long value as its start and length).
  return summarize(String(expected), redactKey, 0, isSecretField(name)) as string;
}

/** The matcher fields an entry fails, each naming the field, what was expected and what the entry has. */
export function differences(m: Matcher, accountId: string | undefined, e: JournalEntry): string[] {
  const out: string[] = [];
  if (m.service !== undefined && e.service !== m.service) out.push(`service: expected ${m.service}, got ${e.service}`);
  if (m.listener !== undefined && e.listener !== m.listener) out.push(`listener: expected ${m.listener}, got ${e.listener}`);
  if (m.method !== undefined && e.method !== m.method.toUpperCase()) out.push(`method: expected ${m.method.toUpperCase()}, got ${e.method}`);
  if (m.path !== undefined && e.path !== m.path) out.push(`path: expected ${m.path}, got ${e.path}`);
  if (accountId !== undefined && e.accountId !== accountId) out.push(`account: expected ${redactKey(m.account!.trim())}, got ${e.account ?? 'none'}`);
  if (m.status !== undefined && e.status !== m.status) out.push(`status: expected ${m.status}, got ${e.status ?? 'none (in progress)'}`);
  if (m.code !== undefined) {
    const code = entryCode(e);
    if (String(code) !== String(m.code)) out.push(`code: expected ${m.code}, got ${code ?? 'none'}`);
  }
  if (m.since_ms !== undefined && e.at_ms < m.since_ms) out.push(`at_ms: expected at or after ${m.since_ms}, got ${e.at_ms}`);
  if (m.until_ms !== undefined && e.at_ms >= m.until_ms) out.push(`at_ms: expected before ${m.until_ms}, got ${e.at_ms}`);
  if (m.fault !== undefined && (e.fault !== undefined) !== m.fault) {
    out.push(m.fault ? 'fault: expected one, got none' : `fault: expected none, got one (${e.fault!.origin})`);
  }
  if (m.headers !== undefined) {
    const headers = e.request.headers;
    for (const [name, value] of Object.entries(m.headers)) {
      const key = name.toLowerCase();
      // Credentials are kept redacted: the expected value is redacted the same way before comparing, and shown so.
      const want = journalHeaderValue(key, value);
      const got = headers[key];
      if (got !== want) out.push(`header ${key}: expected ${show(want)}, got ${cut(show(got))}`);
    }
  }
  if (m.query !== undefined) {
    const query = e.request.query ?? {};
    for (const [name, value] of Object.entries(m.query)) {
      const want = queryValue(value, name);
      if (firstDifference(want, query[name], '') !== null) out.push(`query ${name}: expected ${cut(show(want))}, got ${cut(show(query[name]))}`);
    }
  }
  if (m.body !== undefined) {
    // The entry keeps the body's summary: the expected body is summarized the same way (a long string
    // as its start and length, a credential redacted, so never echoed in a near miss).
    const d = firstDifference(summarize(m.body, redactKey), e.request.body, 'body');
    if (d) out.push(d);
  }
  return out;
}
