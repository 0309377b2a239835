import { describe, expect, test } from 'vitest';
import { conversationPrice } from '../../src/services/platform/conversation/model.js';
import { priceOf as platformAudioPrice } from '../../src/services/platform/shared/billing.js';
import { audioPrice, canPay, chargeOrRefuse, priceOf } from '../../src/services/shared/charges.js';
import { accountOf, modelEmulator, thrown } from './model-emulator.js';

/** The one charge path (services/shared/charges.ts): one rounding rule, the balance check, the charge. */
describe('the charge path', () => {
  test('a price is prorated and rounded up to the next micro-unit, wherever it is used', async () => {
    expect(priceOf(2_500_000, 1000, 3_600_000)).toBe(695); // speech to text: 1 s at 2.50 yuan an hour
    expect(audioPrice(333, 1001)).toBe(334);
    expect(platformAudioPrice(333, 1001)).toBe(334);
    const emu = await modelEmulator();
    // The conversation reply's audio was rounded to the nearest micro-unit (333 here): it follows the rule now.
    emu.fixtures.data['billing.json'].prices_micro.conversation_audio_second = 333;
    expect(conversationPrice(emu, 1.001)).toBe(334);
    expect(conversationPrice(emu, 2)).toBe(666);
  });

  test("a balance that does not pay is refused in the caller's words and charged nothing; one that pays is charged", async () => {
    const emu = await modelEmulator();
    emu.accounts.put('charge-key', { balance_micro: 500 });
    const account = accountOf(emu, 'charge-key');
    expect(thrown(() => chargeOrRefuse(emu, account, 501, () => new Error('no money')))).toEqual(new Error('no money'));
    expect(account.balanceMicro).toBe(500);
    chargeOrRefuse(emu, account, 200, () => new Error('no money'));
    expect(account.balanceMicro).toBe(300);
    emu.accounts.put('empty-key', { balance_micro: 0 });
    expect(canPay(emu, accountOf(emu, 'empty-key'), 0)).toBe(false);
    expect(canPay(emu, account, 0)).toBe(true);
  });
});
