import { describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/state/accounts.js';
import { budgetMs, MAX_REMAINING, newMeter, remainingSeconds, seconds, settleMeters } from '../../src/services/platform/shared/meter.js';

/** Per-second billing of running sessions: the settlement rules on plain data. */
const account = (balanceMicro: number, freeCallSeconds = 0) => ({ balanceMicro, freeCallSeconds }) as Account;

describe('budgetMs and remainingSeconds', () => {
  it('free pool first, then the balance at the price', () => {
    expect(budgetMs(account(5000, 10), 1000, true)).toBe(15_000);
    expect(budgetMs(account(5000, 10), 1000, false)).toBe(5000);
    expect(remainingSeconds(account(5000, 10), 1000, true)).toBe(15);
  });

  it('a free price never runs out: the largest 32-bit count of seconds', () => {
    expect(budgetMs(account(0), 0, true)).toBe(Number.POSITIVE_INFINITY);
    expect(remainingSeconds(account(0), 0, true)).toBe(MAX_REMAINING);
  });

  it('seconds keep millisecond precision', () => {
    expect(seconds(1234.6)).toBe(1.235);
  });
});

describe('settleMeters', () => {
  it('bills a meter up to the moment, from where it was settled', () => {
    const who = account(1_000_000);
    const meter = newMeter(0);
    expect(settleMeters(who, [meter], 3000, 1000, false)).toBeNull();
    expect(meter).toEqual({ settledToMs: 3000, billedMs: 3000, freeMs: 0, costExact: 3000, chargedMicro: 3000 });
    expect(who.balanceMicro).toBe(997_000);
    expect(settleMeters(who, [meter], 3000, 1000, false)).toBeNull(); // nothing new to bill
    expect(who.balanceMicro).toBe(997_000);
  });

  it('the free pool pays first', () => {
    const who = account(10_000, 2);
    const meter = newMeter(0);
    settleMeters(who, [meter], 3000, 1000, true);
    expect(meter).toMatchObject({ billedMs: 3000, freeMs: 2000, costExact: 1000, chargedMicro: 1000 });
    expect([who.balanceMicro, who.freeCallSeconds]).toEqual([9000, 0]);
  });

  it('concurrent meters are billed piecewise, each from its own start', () => {
    const who = account(1_000_000);
    const first = newMeter(0);
    const second = newMeter(1000);
    settleMeters(who, [first, second], 3000, 1000, false);
    expect([first.billedMs, second.billedMs]).toEqual([3000, 2000]);
    expect(who.balanceMicro).toBe(995_000);
  });

  it('money running out stops every meter at that moment and empties the balance', () => {
    const who = account(3000);
    const first = newMeter(0);
    const second = newMeter(0);
    expect(settleMeters(who, [first, second], 10_000, 1000, false)).toBe(1500);
    expect([first.settledToMs, second.settledToMs, first.billedMs, second.billedMs]).toEqual([1500, 1500, 1500, 1500]);
    expect(who.balanceMicro).toBe(0);
  });

  it('fractions of a micro-unit carry over: what is taken follows the exact cost without drift', () => {
    const who = account(1000);
    const meter = newMeter(0);
    settleMeters(who, [meter], 1500, 1, false);
    expect([meter.costExact, meter.chargedMicro, who.balanceMicro]).toEqual([1.5, 2, 998]);
    settleMeters(who, [meter], 3000, 1, false);
    expect([meter.costExact, meter.chargedMicro, who.balanceMicro]).toEqual([3, 3, 997]);
  });
});
