/**
 * Per-second billing of running sessions (calls, agent sessions), through the one charge path
 * (services/shared/charges.ts: its rounding rule, its charge, the free pool). Every running meter of an account is
 * settled to the same moment before any rule reads the balance, so concurrent sessions share the free
 * pool and the balance fairly, and a balance that runs out ends them at the exact moment it does.
 * Plain data: a meter is part of its session record and is saved with it.
 */
import type { Account } from '../../../core/state/accounts.js';
import { meteredDue, takeFreeSeconds } from '../../shared/charges.js';

export interface Meter {
  /** Emulator time (ms) up to which this meter has been billed. */
  settledToMs: number;
  /** Call time billed so far (ms), free and paid. */
  billedMs: number;
  /** Part of billedMs covered by the free pool. */
  freeMs: number;
  /** Exact cost in micro-units (fractional), and the whole micro-units already taken from the balance. */
  costExact: number;
  chargedMicro: number;
}

export function newMeter(atMs: number): Meter {
  return { settledToMs: atMs, billedMs: 0, freeMs: 0, costExact: 0, chargedMicro: 0 };
}

/** Milliseconds of call time the account can still pay for one session (free pool first). */
export function budgetMs(account: Account, priceMicroPerSec: number, useFreePool: boolean): number {
  const free = useFreePool ? account.freeCallSeconds * 1000 : 0;
  if (priceMicroPerSec <= 0) return Number.POSITIVE_INFINITY;
  return free + (account.balanceMicro / priceMicroPerSec) * 1000;
}

/** Takes micro-units from the account in place (plain data: how the meter's own rules are tested). */
const debitInPlace =
  (account: Account) =>
  (micro: number): void => {
    account.balanceMicro = Math.max(0, account.balanceMicro - micro);
  };

/**
 * Bills the running meters of one account up to `untilMs`. Returns the moment the money ran out (all
 * of them stop there) or null. Meters are billed piecewise, each from its own `settledToMs`. Each
 * meter's due is priced by the one charge path's rule (services/shared/charges.ts `meteredDue`) and
 * taken through `pay` (the sessions pass that path's `charge`), the free pool first (`takeFreeSeconds`).
 */
export function settleMeters(
  account: Account,
  running: Meter[],
  untilMs: number,
  price: number,
  useFreePool: boolean,
  pay: (micro: number) => void = debitInPlace(account),
): number | null {
  const open = running.filter((meter) => meter.settledToMs < untilMs);
  if (open.length === 0) return null;
  let at = Math.min(...open.map((meter) => meter.settledToMs));
  while (at < untilMs) {
    const active = open.filter((meter) => meter.settledToMs <= at);
    const later = open.filter((meter) => meter.settledToMs > at).map((meter) => meter.settledToMs);
    const next = Math.min(untilMs, ...later);
    const count = active.length;
    const span = Math.min(next - at, Math.floor(budgetMs(account, price, useFreePool) / count));
    const freeAvail = useFreePool ? account.freeCallSeconds * 1000 : 0;
    const freeEach = Math.min(freeAvail, count * span) / count;
    for (const meter of active) {
      meter.billedMs += span;
      meter.freeMs += freeEach;
      meter.costExact += ((span - freeEach) * price) / 1000;
      const due = meteredDue(meter.costExact, meter.chargedMicro);
      if (due > 0) pay(due);
      meter.chargedMicro += due;
      meter.settledToMs = at + span;
    }
    if (useFreePool) takeFreeSeconds(account, (freeEach * count) / 1000);
    if (span < next - at) {
      // Out of money: what is left is less than one millisecond of call time, and is taken too.
      if (account.balanceMicro > 0) pay(account.balanceMicro);
      if (useFreePool) takeFreeSeconds(account, account.freeCallSeconds);
      return at + span;
    }
    at = next;
  }
  return null;
}

/** Whole seconds the account can still pay for (free pool counted), as the heartbeats report it. */
export function remainingSeconds(account: Account, price: number, useFreePool: boolean): number {
  const ms = budgetMs(account, price, useFreePool);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : MAX_REMAINING;
}

/** Reported when calls are free (price 0): the largest 32-bit count of seconds. */
export const MAX_REMAINING = 2_147_483_647;

/** Milliseconds as seconds with millisecond precision (the unit of `total_sec`, `elapsed_seconds`). */
export const seconds = (ms: number): number => Math.round(ms) / 1000;
