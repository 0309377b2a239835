/**
 * `POST /_emulator/verify`: counts the journal entries a matcher selects and checks the count against
 * an expectation in one call. 200 with the count when it holds; 409 with the count and the nearest
 * entries that did not match (fewest differing fields first, newest first), as WireMock's near misses.
 * With `budgets`, the latency figures of the entries selected (control/figures.ts) must also hold each
 * bound (`{"first_audio_ms":{"p95":{"lte":800}}}`); a budget broken answers 409 naming the entries over it.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { accountId } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import type { JournalEntry } from '../core/journal/journal.js';
import { ControlError, input, keyParam } from './common.js';
import { entryView } from './journal.js';
import { differences, matcherFields } from './journal-match.js';
import { FIGURES, gather, STATS, statsOf, unitOf, type Figure, type Samples, type Stat } from './figures.js';

/** One bound on a statistic: every comparison given must hold. */
const bound = z
  .object({ lte: z.number().optional(), lt: z.number().optional(), gte: z.number().optional(), gt: z.number().optional() })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'a bound needs lte, lt, gte or gt' });
type Bound = z.output<typeof bound>;

const statBudget = z.object(Object.fromEntries(STATS.map((s) => [s, bound.optional()])) as Record<Stat, z.ZodOptional<typeof bound>>).strict();
export const budgetsSchema = z
  .object(Object.fromEntries(FIGURES.map((f) => [f, statBudget.optional()])) as Record<Figure, z.ZodOptional<typeof statBudget>>)
  .strict();

export const verifyBody = z
  .object({
    request: z.object(matcherFields).strict(),
    exactly: z.int().min(0).optional(),
    at_least: z.int().min(0).optional(),
    at_most: z.int().min(0).optional(),
    /** Bounds on the latency figures of the entries selected, per figure and statistic. */
    budgets: budgetsSchema.optional(),
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

const COMPARE: Record<keyof Bound, { holds: (v: number, limit: number) => boolean; words: string }> = {
  lte: { holds: (v, l) => v <= l, words: 'at most' },
  lt: { holds: (v, l) => v < l, words: 'under' },
  gte: { holds: (v, l) => v >= l, words: 'at least' },
  gt: { holds: (v, l) => v > l, words: 'over' },
};

/** One budget as checked: the statistic's value over the entries selected, and whether every bound holds. */
export interface BudgetResult {
  figure: Figure;
  stat: Stat;
  value: number | null;
  /** Values the statistic was taken over. */
  count: number;
  bound: Bound;
  ok: boolean;
  /** Why it failed, in words (absent when it held). */
  message?: string;
}

/** Checks each budget over the samples; answers the results and, for the broken ones, the samples breaking them (worst first). */
function checkBudgets(budgets: NonNullable<VerifyBody['budgets']>, samples: Samples) {
  const results: BudgetResult[] = [];
  const over = new Map<JournalEntry, string[]>();
  const worst = new Map<JournalEntry, number>();
  for (const figure of FIGURES) {
    const byStat = budgets[figure];
    if (!byStat) continue;
    const stats = statsOf(samples[figure].values);
    for (const stat of STATS) {
      const b = byStat[stat];
      if (!b) continue;
      const value = stats[stat];
      const comparisons = (Object.keys(COMPARE) as (keyof Bound)[]).filter((k) => b[k] !== undefined);
      const broken = comparisons.filter((k) => value === null || !COMPARE[k].holds(value, b[k]!));
      const words = comparisons.map((k) => `${COMPARE[k].words} ${b[k]}${unitOf(figure)}`).join(' and ');
      if (!broken.length) {
        results.push({ figure, stat, value, count: stats.count, bound: b, ok: true });
        continue;
      }
      const message =
        value === null
          ? `${figure} ${stat}: no entry selected carries ${figure} (budget ${words})`
          : `${figure} ${stat} is ${value}${unitOf(figure)} over ${stats.count} value${stats.count === 1 ? '' : 's'}, budget ${words}`;
      results.push({ figure, stat, value, count: stats.count, bound: b, ok: false, message });
      // The requests over budget: each value that breaks the bound itself, worst first.
      const { values, entries, turns } = samples[figure];
      for (let i = 0; i < values.length; i++) {
        const value = values[i]!;
        const entry = entries[i]!;
        const breaks = broken.filter((k) => !COMPARE[k].holds(value, b[k]!));
        if (!breaks.length) continue;
        const where = turns[i]! < 0 ? '' : ` (turn ${turns[i]! + 1})`;
        const note = `${figure}${where}: ${value}${unitOf(figure)}, budget ${stat} ${words}`;
        (over.get(entry) ?? over.set(entry, []).get(entry)!).push(note);
        const excess = Math.max(...breaks.map((k) => Math.abs(value - b[k]!)));
        worst.set(entry, Math.max(worst.get(entry) ?? 0, excess));
      }
    }
  }
  const overBudget = [...over.entries()]
    .sort((a, b) => worst.get(b[0])! - worst.get(a[0])!)
    .slice(0, NEAR_MISSES)
    .map(([entry, notes]) => ({ differences: notes, entry: entryView(entry) }));
  return { results, overBudget };
}

/** The expectation in words, and the number its noun agrees with ("exactly 1 matching request"). */
function expectation(b: VerifyBody): { holds: (n: number) => boolean; text: string; noun: number } {
  if (b.exactly !== undefined) return { holds: (n) => n === b.exactly, text: `exactly ${b.exactly}`, noun: b.exactly };
  const min = b.at_least ?? (b.at_most === undefined ? 1 : 0);
  const max = b.at_most ?? Infinity;
  const text = [b.at_least !== undefined || b.at_most === undefined ? `at least ${min}` : '', b.at_most !== undefined ? `at most ${max}` : '']
    .filter(Boolean)
    .join(' and ');
  return { holds: (n) => n >= min && n <= max, text, noun: b.at_most ?? min };
}

export function verifyRoutes(app: FastifyInstance, emu: Emulator): void {
  app.post('/verify', { ...input({ body: true, what: 'verify' }), schema: { body: verifyBody } }, async (req) => {
    const body = req.body as VerifyBody;
    const m = body.request;
    const id = m.account === undefined ? undefined : accountId(keyParam(m.account, 'verify field request.account'));
    const expected = expectation(body);
    const misses: { entry: JournalEntry; diff: string[] }[] = [];
    const selected: JournalEntry[] = [];
    for (const entry of emu.journal.list()) {
      const diff = differences(m, id, entry);
      if (diff.length === 0) selected.push(entry);
      else misses.push({ entry, diff });
    }
    const count = selected.length;
    if (expected.holds(count)) {
      if (!body.budgets) return { ok: true, count, expected: expected.text };
      const { results, overBudget } = checkBudgets(body.budgets, gather(selected).samples);
      const failed = results.filter((r) => !r.ok);
      if (!failed.length) return { ok: true, count, expected: expected.text, budgets: results };
      throw new ControlError(409, failed.map((r) => r.message).join('; '), {
        ok: false,
        count,
        expected: expected.text,
        budgets: results,
        near_misses: overBudget,
      });
    }
    // Stable sort: among equally near entries, the newest (journal order) comes first.
    misses.sort((a, b) => a.diff.length - b.diff.length);
    throw new ControlError(409, `expected ${expected.text} matching request${expected.noun === 1 ? '' : 's'}, found ${count}`, {
      ok: false,
      count,
      expected: expected.text,
      near_misses: misses.slice(0, NEAR_MISSES).map(({ entry, diff }) => ({ differences: diff, entry: entryView(entry) })),
    });
  });
}
