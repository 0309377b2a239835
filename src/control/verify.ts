/**
 * `POST /_emulator/verify`: counts the journal entries a matcher selects and checks the count against
 * an expectation in one call. 200 with the count when it holds; 409 with the count and the nearest
 * entries that did not match (fewest differing fields first, newest first), as WireMock's near misses.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { accountId } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import type { JournalEntry } from '../core/journal/journal.js';
import { ControlError, input, keyParam } from './common.js';
import { entryView } from './journal.js';
import { differences, matcherFields } from './journal-match.js';

export const verifyBody = z
  .object({
    request: z.object(matcherFields).strict(),
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
  })
  .refine((b) => b.request.since_ms === undefined || b.request.until_ms === undefined || b.request.since_ms < b.request.until_ms, {
    message: 'since_ms must be before until_ms',
    path: ['request', 'since_ms'],
  });
type VerifyBody = z.output<typeof verifyBody>;

const NEAR_MISSES = 5;

/** What a verify expects: its test and its words; `last` is the number the noun follows (`exactly 1 matching request`). */
function expectation(b: VerifyBody): { holds: (n: number) => boolean; text: string; last: number } {
  if (b.exactly !== undefined) return { holds: (n) => n === b.exactly, text: `exactly ${b.exactly}`, last: b.exactly };
  const min = b.at_least ?? (b.at_most === undefined ? 1 : 0);
  const max = b.at_most ?? Infinity;
  const text = [b.at_least !== undefined || b.at_most === undefined ? `at least ${min}` : '', b.at_most !== undefined ? `at most ${max}` : '']
    .filter(Boolean)
    .join(' and ');
  return { holds: (n) => n >= min && n <= max, text, last: b.at_most ?? min };
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
    throw new ControlError(409, `expected ${expected.text} matching request${expected.last === 1 ? '' : 's'}, found ${count}`, {
      ok: false,
      count,
      expected: expected.text,
      near_misses: misses.slice(0, NEAR_MISSES).map(({ entry, diff }) => ({ differences: diff, entry: entryView(entry) })),
    });
  });
}
