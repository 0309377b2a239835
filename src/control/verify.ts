import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { accountId, redactKey } from '../core/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { specCodeOf, type JournalEntry } from '../core/journal.js';
import { ControlError, input, keyParam } from './common.js';
import { entryView } from './journal.js';

/**
 * `POST /_emulator/verify`: counts the journal entries a matcher selects and checks the count against
 * an expectation in one call. 200 with the count when it holds; 409 with the count and the nearest
 * entries that did not match (fewest differing fields first, newest first), as WireMock's near misses.
 */
export const verifyBody = z
  .object({
    request: z
      .object({
        service: z.enum(['speech', 'platform']).optional(),
        method: z.string().min(1).optional(),
        path: z.string().startsWith('/').optional(),
        account: z.string().optional(),
        status: z.int().min(100).max(599).optional(),
        code: z.union([z.int(), z.string().min(1)]).optional(),
        body: z.unknown().optional(),
      })
      .strict(),
    exactly: z.int().min(0).optional(),
    at_least: z.int().min(0).optional(),
    at_most: z.int().min(0).optional(),
  })
  .strict()
  .refine((b) => b.exactly === undefined || (b.at_least === undefined && b.at_most === undefined), {
    message: 'exactly cannot be combined with at_least or at_most',
    path: ['exactly'],
  })
  .refine((b) => b.at_least === undefined || b.at_most === undefined || b.at_least <= b.at_most, {
    message: 'at_least must not exceed at_most',
    path: ['at_least'],
  });
type VerifyBody = z.output<typeof verifyBody>;

const NEAR_MISSES = 5;

/** True when every field of `expected` is in `actual` with a matching value (arrays: same length, item by item). */
export function jsonSubset(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(expected, actual);
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => jsonSubset(v, actual[i]));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([k, v]) => Object.hasOwn(actual, k) && jsonSubset(v, (actual as Record<string, unknown>)[k]));
}

/** The matcher fields an entry fails, each with what was expected and what the entry has. */
function differences(m: VerifyBody['request'], id: string | undefined, e: JournalEntry): string[] {
  const out: string[] = [];
  if (m.service !== undefined && e.service !== m.service) out.push(`service: expected ${m.service}, got ${e.service}`);
  if (m.method !== undefined && e.method !== m.method.toUpperCase()) out.push(`method: expected ${m.method.toUpperCase()}, got ${e.method}`);
  if (m.path !== undefined && e.path !== m.path) out.push(`path: expected ${m.path}, got ${e.path}`);
  if (id !== undefined && e.accountId !== id) out.push(`account: expected ${redactKey(m.account!.trim())}, got ${e.account ?? 'none'}`);
  if (m.status !== undefined && e.status !== m.status) out.push(`status: expected ${m.status}, got ${e.status ?? 'none (in progress)'}`);
  // An answer too large to summarize keeps its code beside the summary.
  const code = e.response.code !== undefined ? String(e.response.code) : specCodeOf(e.response.summary);
  if (m.code !== undefined && code !== String(m.code)) out.push(`code: expected ${m.code}, got ${code || 'none'}`);
  if (m.body !== undefined && !jsonSubset(m.body, e.request.body)) out.push('body: not a superset of the expected JSON');
  return out;
}

function expectation(b: VerifyBody): { holds: (n: number) => boolean; text: string } {
  if (b.exactly !== undefined) return { holds: (n) => n === b.exactly, text: `exactly ${b.exactly}` };
  const min = b.at_least ?? (b.at_most === undefined ? 1 : 0);
  const max = b.at_most ?? Infinity;
  const text = [b.at_least !== undefined || b.at_most === undefined ? `at least ${min}` : '', b.at_most !== undefined ? `at most ${max}` : '']
    .filter(Boolean)
    .join(' and ');
  return { holds: (n) => n >= min && n <= max, text };
}

export function verifyRoutes(app: FastifyInstance, emu: Emulator): void {
  app.post('/verify', { ...input({ body: true, what: 'verify' }), schema: { body: verifyBody } }, async (req) => {
    const body = req.body as VerifyBody;
    const m = body.request;
    const id = m.account === undefined ? undefined : accountId(keyParam(m.account, 'verify field request.account'));
    const expected = expectation(body);
    const misses: { entry: JournalEntry; diff: string[] }[] = [];
    let count = 0;
    for (const entry of emu.journal.list()) {
      const diff = differences(m, id, entry);
      if (diff.length === 0) count++;
      else misses.push({ entry, diff });
    }
    if (expected.holds(count)) return { ok: true, count, expected: expected.text };
    // Stable sort: among equally near entries, the newest (journal order) comes first.
    misses.sort((a, b) => a.diff.length - b.diff.length);
    throw new ControlError(409, `expected ${expected.text} matching request${count === 1 ? '' : 's'}, found ${count}`, {
      ok: false,
      count,
      expected: expected.text,
      near_misses: misses.slice(0, NEAR_MISSES).map(({ entry, diff }) => ({ differences: diff, entry: entryView(entry) })),
    });
  });
}
