/** Billing of the platform's audio-priced operations (podcast, recognition, detection, diarization), through the one charge path. Units are micro-units. */
import { chargeOrRefuse as chargeWith } from '../../shared/charges.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';

/** Micro-units for `durationMs` of audio at a per-second price (the one rounding rule: services/shared/charges.ts). */
export { audioPrice as priceOf } from '../../shared/charges.js';

/** The one charge path with the platform's refusal: 20003 (the family's balance error) when the price exceeds the balance. */
export function chargeOrRefuse(emu: Emulator, account: Account, micro: number, what: string): void {
  chargeWith(emu, account, micro, () => new PlatformError('balance', `insufficient balance for ${what}`));
}
