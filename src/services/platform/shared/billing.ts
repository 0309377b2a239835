/** Billing of audio-priced operations (podcast, recognition, detection, diarization). Units are micro-units. */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';

/** Micro-units for `durationMs` of audio at a per-second price (prorated, rounded up). */
export function priceOf(perSecondMicro: number, durationMs: number): number {
  return Math.ceil((perSecondMicro * durationMs) / 1000);
}

/** Balance check then charge: 20003 (the family's balance error) when the price exceeds the balance. */
export function chargeOrRefuse(emu: Emulator, account: Account, micro: number, what: string): void {
  if (!emu.accounts.canAfford(account, micro)) throw new PlatformError('balance', `insufficient balance for ${what}`);
  emu.accounts.charge(account, micro);
  emu.markDirty('accounts', account.id, account.id);
}
