// planTts (platform/tts/model.ts) called directly: one test per check, in the order the model runs them
// (voice_id, generate_text, weighted length, voice, model_id, speed, audio_format, language, balance).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { putCustomVoice } from '../../src/services/shared/custom-voices.js';
import { MAX_WEIGHTED_LENGTH, planTts } from '../../src/services/platform/tts/model.js';
import type { TtsRequest } from '../../src/services/platform/tts/schema.js';
import { accountOf, modelEmulator, thrown } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});

const base = { voice_id: 'female_bright', generate_text: 'Hello.' };
const plan = (fields: Record<string, unknown>, key = 'tts-plan') => planTts(emu, accountOf(emu, key), { ...base, ...fields } as TtsRequest);
const refusal = (fields: Record<string, unknown>, key?: string) => thrown(() => plan(fields, key));
const param = (message: string) => ({ family: 'tts', codeOrKind: 'param', code: 10001, message }) as const;

describe('planTts: the checks in order', () => {
  it('planTts: voice_id blank → 10001', () => {
    expectRefusal(refusal({ voice_id: '  ' }), param('voice_id: is required and must not be empty'));
  });

  it('planTts: generate_text blank → 10001', () => {
    expectRefusal(refusal({ generate_text: ' \n ' }), param('generate_text: is required and must not be empty'));
  });

  it(`planTts: generate_text over ${MAX_WEIGHTED_LENGTH} weighted characters (a Han character counts 2) → 10001`, () => {
    expectRefusal(
      refusal({ generate_text: `${'你'.repeat(250)}a` }),
      param('generate_text: weighted length 501 exceeds 500 (a Chinese character counts 2, any other character 1)'),
    );
  });

  it(`planTts: generate_text of exactly ${MAX_WEIGHTED_LENGTH} weighted characters passes`, () => {
    expect(plan({ generate_text: '你'.repeat(250) }).weightedLength).toBe(500);
    expect(plan({ generate_text: 'a'.repeat(500) }).weightedLength).toBe(500);
  });

  it('planTts: voice_id neither a system voice nor a custom voice of this account → 10001', () => {
    expectRefusal(refusal({ voice_id: 'nobody' }), param('voice_id: "nobody" is neither a system voice nor a custom voice of this account'));
  });

  it("planTts: another account's custom voice is not found → 10001", () => {
    const owner = accountOf(emu, 'tts-voice-owner');
    putCustomVoice(emu, {
      voiceId: 'my_clone',
      accountId: owner.id,
      toneId: 'tone-x',
      refBlob: 'b',
      refFormat: 'wav',
      refDurationMs: 1,
      refText: 'x',
      createdAt: 0,
    });
    expectRefusal(
      refusal({ voice_id: 'my_clone' }, 'tts-stranger'),
      param('voice_id: "my_clone" is neither a system voice nor a custom voice of this account'),
    );
    const own = plan({ voice_id: 'my_clone' }, 'tts-voice-owner');
    expect(own.synth.voices).toEqual([{ id: 'tone-x', weight: 1 }]);
    expect(own.language).toBe('zh');
  });

  it('planTts: model_id not std-tts → 10001', () => {
    expectRefusal(refusal({ model_id: 'hd-tts' }), param('model_id: unsupported model "hd-tts"; supported: std-tts'));
  });

  it('planTts: speed below 0.6 → 10001', () => {
    expectRefusal(refusal({ speed: 0.5 }), param('speed: must be between 0.6 and 1.2 (or 0 for the default 1.0), got 0.5'));
  });

  it('planTts: speed above 1.2 → 10001', () => {
    expectRefusal(refusal({ speed: 1.25 }), param('speed: must be between 0.6 and 1.2 (or 0 for the default 1.0), got 1.25'));
  });

  it('planTts: speed 0 reads as 1.0; 0.6 and 1.2 are inside', () => {
    expect(plan({ speed: 0 }).synth.speed).toBe(1);
    expect(plan({ speed: 0.6 }).synth.speed).toBe(0.6);
    expect(plan({ speed: 1.2 }).synth.speed).toBe(1.2);
  });

  it('planTts: audio_format not wav or pcm → 10001', () => {
    expectRefusal(refusal({ audio_format: 'mp3' }), param('audio_format: unsupported format "mp3"; use wav or pcm (pcm_s16le)'));
  });

  it('planTts: language not a language code → 10001', () => {
    expectRefusal(refusal({ language: 'english!' }), param('language: "english!" is not a language code such as zh or en'));
  });

  it('planTts: balance short of the price (100 micro-units a weighted character) → 20003', () => {
    emu.accounts.put('tts-poor', { balance_micro: 599 });
    expectRefusal(refusal({}, 'tts-poor'), {
      family: 'tts',
      codeOrKind: 'balance',
      code: 20003,
      message: 'insufficient balance: this synthesis costs 600 micro-units, the balance is 599',
    });
  });

  it('planTts: a request that passes every check is planned, nothing charged yet', () => {
    const account = accountOf(emu, 'tts-ok');
    const before = account.balanceMicro;
    const planned = plan({ audio_format: 'pcm_s16le', speed: 1.1, language: 'en-US', text_normalization: true }, 'tts-ok');
    expect(planned).toMatchObject({
      format: 'pcm',
      contentType: 'audio/pcm',
      voiceId: 'female_bright',
      language: 'en-US',
      weightedLength: 6,
      priceMicro: 600,
      synth: { text: 'Hello.', voices: [{ id: 'female_bright', weight: 1 }], speed: 1.1, textNormalization: true, sampleRate: 24000, channels: 1 },
    });
    expect(plan({}, 'tts-ok')).toMatchObject({ format: 'wav', contentType: 'audio/wav', language: 'en' });
    expect(account.balanceMicro).toBe(before);
  });

  it('planTts: the order — voice_id blank is named before generate_text blank', () => {
    expect(messageOf(refusal({ voice_id: '', generate_text: '' }))).toBe('voice_id: is required and must not be empty');
  });

  it('planTts: the order — with every later check failing, each fix reveals the next rule', () => {
    emu.accounts.put('tts-order', { balance_micro: 0 });
    const fields: Record<string, unknown> = {
      generate_text: 'a'.repeat(501),
      voice_id: 'nobody',
      model_id: 'hd-tts',
      speed: 2,
      audio_format: 'mp3',
      language: '??',
    };
    const fixes: [string, Record<string, unknown>][] = [
      ['generate_text: weighted length', { generate_text: 'Hello.' }],
      ['voice_id: "nobody"', { voice_id: 'female_bright' }],
      ['model_id:', { model_id: 'std-tts' }],
      ['speed:', { speed: 1 }],
      ['audio_format:', { audio_format: 'wav' }],
      ['language:', { language: 'en' }],
    ];
    for (const [first, fix] of fixes) {
      expect(messageOf(refusal(fields, 'tts-order'))).toMatch(new RegExp(`^${first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      Object.assign(fields, fix);
    }
    expect(messageOf(refusal(fields, 'tts-order'))).toMatch(/^insufficient balance: /);
  });
});
