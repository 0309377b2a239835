/**
 * The one charge path of both services, for every operation that costs money: its price (prorated and
 * rounded up to the next micro-unit: the only rounding rule, docs/configuration.md "Billing"), whether the
 * account can pay it (a balance of zero pays nothing, not even a free operation), and the charge, kept
 * with a data dir. A service words its own refusal; the order of its checks stays its own (a speech
 * request meets its rate windows between the balance check and the charge). A metered session (calls,
 * agents) is priced as it runs by the same rule (`meteredDue`), from the free pool first (`takeFreeSeconds`),
 * and charged through the same `charge`.
 */
import type { Emulator } from '../../core/emulator.js';
import type { Account } from '../../core/state/accounts.js';

/** Micro-units for `amount` units at `unitMicro` each, per `per` units (1000 for a per-second price of milliseconds), rounded up. */
export function priceOf(unitMicro: number, amount: number, per = 1): number {
  return Math.ceil((unitMicro * amount) / per);
}

/** Micro-units for `durationMs` of audio at a per-second price. */
export function audioPrice(perSecondMicro: number, durationMs: number): number {
  return priceOf(perSecondMicro, durationMs, 1000);
}

/** A float's own noise in a sum of fractions (far below one micro-unit): not a fraction to round up. */
const FLOAT_NOISE = 1e-6;

/**
 * What a metered session (calls, agent sessions: billed to the millisecond while they run) owes now: its
 * exact cost so far (fractional micro-units) priced by the same rule as every other operation, rounded
 * up to the next micro-unit, less what it has taken already. The fraction is carried from one settlement
 * to the next, so a session is never charged a fraction twice, whatever the number of heartbeats.
 */
export function meteredDue(exactMicro: number, takenMicro: number): number {
  return Math.max(0, Math.ceil(exactMicro - FLOAT_NOISE) - takenMicro);
}

/**
 * Free call seconds, the pool a metered session uses before the balance (calls only): `seconds` taken
 * from the account's pool, never below zero.
 */
export function takeFreeSeconds(account: Account, seconds: number): void {
  account.freeCallSeconds = Math.max(0, account.freeCallSeconds - seconds);
}

/** Whether the account's balance pays `micro`. */
export function canPay(emu: Emulator, account: Account, micro: number): boolean {
  return emu.accounts.canAfford(account, micro);
}

/** Takes `micro` from the balance (never below zero) and marks the account changed. */
export function charge(emu: Emulator, account: Account, micro: number): void {
  emu.accounts.charge(account, micro);
  emu.markDirty('accounts', account.id, account.id);
}

/** The balance check, then the charge: `refuse()` (the service's own error) is thrown when it does not pay. */
export function chargeOrRefuse(emu: Emulator, account: Account, micro: number, refuse: () => Error): void {
  if (!canPay(emu, account, micro)) throw refuse();
  charge(emu, account, micro);
}
