// planRequest (speech/model.ts) called directly: one test per check, in the order the model runs them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { planRequest } from '../../src/services/speech/model.js';
import type { T2aRequest } from '../../src/services/speech/schema.js';
import { accountOf, modelEmulator, thrown } from './model-emulator.js';

let emu: Emulator;
let account: Account;
beforeAll(async () => {
  emu = await modelEmulator();
  account = accountOf(emu, 'plan-key');
});

const base = { model: 'speech-02-hd', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } };
const plan = (fields: Record<string, unknown>) => planRequest(emu, account, { ...base, ...fields } as T2aRequest);
const refusal = (fields: Record<string, unknown>) => thrown(() => plan(fields));

describe('planRequest: the checks in order', () => {
  it('model: a name outside the catalogue', () => {
    expect(refusal({ model: 'speech-99' })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/^invalid params, model must be one of .*\(got speech-99\)$/),
    });
  });

  it('text: empty', () => {
    expect(refusal({ text: '' })).toMatchObject({ code: 2013, message: 'invalid params, text is required and must not be empty' });
  });

  it('text: 10,000 characters or more', () => {
    expect(refusal({ text: 'a'.repeat(10_000) })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/text must be shorter than 10000 characters \(got 10000\)/),
    });
  });

  it('text: a pause marker out of range', () => {
    expect(refusal({ text: 'Wait <#120#> now.' })).toMatchObject({ code: 2013, message: expect.stringMatching(/pause marker <#120#>/) });
  });

  it('text: unbalanced formulas with latex_read', () => {
    expect(refusal({ text: 'A formula $$x^2 here.', voice_setting: { ...base.voice_setting, latex_read: true } })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/has 1 "\$\$" delimiters/),
    });
  });

  it('voice_setting.emotion: one the model does not accept', () => {
    expect(refusal({ voice_setting: { ...base.voice_setting, emotion: 'sarcastic' } })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/voice_setting\.emotion sarcastic is not supported by speech-02-hd/),
    });
  });

  it('language_boost: one the model does not support', () => {
    expect(refusal({ language_boost: 'Persian' })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/language_boost Persian is not supported by speech-02-hd/),
    });
  });

  it('audio_setting.format: wav on a stream', () => {
    expect(refusal({ stream: true, audio_setting: { format: 'wav' } })).toMatchObject({
      code: 2013,
      message: 'invalid params, audio_setting.format wav is supported only in non-streaming output',
    });
  });

  it('pronunciation_dict.tone: an entry without its replacement', () => {
    expect(refusal({ pronunciation_dict: { tone: ['lonely'] } })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/pronunciation_dict\.tone\[0\] must have the shape/),
    });
  });

  it('voices: both spellings of the weights', () => {
    const weights = [{ voice_id: 'male-qn-qingse', weight: 1 }];
    expect(refusal({ timber_weights: weights, timbre_weights: weights })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/two spellings of one field/),
    });
  });

  it('voices: a voice id nobody has', () => {
    expect(refusal({ voice_setting: { voice_id: 'nobody-voice' } })).toMatchObject({ code: 2054 });
  });

  it('text: too many invisible characters (1042)', () => {
    expect(refusal({ text: `Hi${'\u0007'.repeat(40)}` })).toMatchObject({ code: 1042 });
  });

  it('text: nothing to pronounce', () => {
    expect(refusal({ text: '?!' })).toMatchObject({ code: 2013, message: 'invalid params, text must contain at least one letter or digit to pronounce' });
  });

  it('a request that passes every check becomes the plan of its audio', () => {
    const p = plan({ audio_setting: { format: 'flac', sample_rate: 24000, channel: 2 }, language_boost: 'Japanese' });
    expect(p).toMatchObject({
      model: 'speech-02-hd',
      format: 'flac',
      sampleRate: 24000,
      channels: 2,
      stream: false,
      language: 'ja',
      voiceIds: ['male-qn-qingse'],
    });
    expect(p.usageCharacters).toBeGreaterThan(0);
  });
});
