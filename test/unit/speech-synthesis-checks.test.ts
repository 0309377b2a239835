// startSynthesis (speech/model.ts) called directly: after planRequest (speech-plan.test.ts), the size cap,
// the balance and the rate windows, one test per check in order; and planRequest's encoder and rate steps.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator, StateArea } from '../../src/core/emulator.js';
import { planRequest, startSynthesis } from '../../src/services/speech/model.js';
import type { T2aRequest } from '../../src/services/speech/schema.js';
import { speechArea } from '../../src/services/speech/state.js';
import { accountOf, modelEmulator, rejected, thrown } from './model-emulator.js';

// The Opus encoder loads in every test run; a test makes it missing to reach the encoder check.
const opus = vi.hoisted(() => ({ problem: null as string | null }));
vi.mock(import('../../src/audio/index.js'), async (importOriginal) => ({ ...(await importOriginal()), opusEncoderProblem: () => opus.problem }));
const MISSING = 'the Opus encoder (npm package opusscript) could not be loaded: Cannot find module';

let emu: Emulator;
let account: Account;
beforeAll(async () => {
  emu = await modelEmulator();
  account = accountOf(emu, 'synthesis-plan-key');
});

const base = { model: 'speech-02-hd', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } };
const request = (fields: Record<string, unknown>) => ({ ...base, ...fields }) as T2aRequest;
const plan = (fields: Record<string, unknown>, options = {}) => planRequest(emu, account, request(fields), options);
const refusal = (fields: Record<string, unknown>) => thrown(() => plan(fields));

describe('planRequest: the encoder and the sample rate (the steps speech-plan.test.ts leaves out)', () => {
  it('checkEncoder: opus while its encoder cannot be loaded names the problem', () => {
    opus.problem = MISSING;
    try {
      expect(refusal({ audio_setting: { format: 'opus' } })).toMatchObject({
        code: 2013,
        message: `invalid params, audio_setting.format opus cannot be served: ${MISSING}`,
      });
      // Other formats never need it.
      expect(plan({ audio_setting: { format: 'mp3' } }).format).toBe('mp3');
    } finally {
      opus.problem = null;
    }
  });

  it('outputRate: a rate outside the general enum for a format other than opus', () => {
    expect(refusal({ audio_setting: { format: 'mp3', sample_rate: 12000 } })).toMatchObject({
      code: 2013,
      message: 'invalid params, audio_setting.sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100',
    });
  });

  it('outputRate: the general enum is checked for μ-law too, before its rate is replaced by 8000', () => {
    expect(refusal({ audio_setting: { format: 'pcmu_wav', sample_rate: 48000 } })).toMatchObject({
      message: 'invalid params, audio_setting.sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100',
    });
  });

  it('outputRate: opus at a rate it does not take on HTTP and the sockets', () => {
    expect(refusal({ audio_setting: { format: 'opus', sample_rate: 48000 } })).toMatchObject({
      code: 2013,
      message: 'invalid params, audio_setting.sample_rate 48000 is not supported for opus; use 8000, 16000 or 24000',
    });
  });

  it('order: wav on a stream is refused before the encoder and the rate are looked at', () => {
    expect(refusal({ stream: true, audio_setting: { format: 'wav', sample_rate: 12000 } })).toMatchObject({
      message: 'invalid params, audio_setting.format wav is supported only in non-streaming output',
    });
  });

  it('order: the missing encoder is named before the opus rate', () => {
    opus.problem = MISSING;
    try {
      expect(refusal({ audio_setting: { format: 'opus', sample_rate: 48000 } })).toMatchObject({
        message: `invalid params, audio_setting.format opus cannot be served: ${MISSING}`,
      });
    } finally {
      opus.problem = null;
    }
  });

  it('order: the rate is refused before pronunciation_dict', () => {
    expect(refusal({ audio_setting: { sample_rate: 12000 }, pronunciation_dict: { tone: ['lonely'] } })).toMatchObject({
      message: 'invalid params, audio_setting.sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100',
    });
  });

  it('the rate each valid request is made at', () => {
    expect(plan({}).sampleRate).toBe(32000);
    expect(plan({ audio_setting: { format: 'flac', sample_rate: 22050 } }).sampleRate).toBe(22050);
    expect(plan({ audio_setting: { format: 'pcmu_raw', sample_rate: 44100 } }).sampleRate).toBe(8000);
    expect(plan({ audio_setting: { format: 'opus' } }).sampleRate).toBe(24000);
    expect(plan({ audio_setting: { format: 'opus', sample_rate: 16000 } }).sampleRate).toBe(16000);
    // Async synthesis settles its own Opus rate.
    expect(plan({ audio_setting: { format: 'opus' } }, { sampleRate: 48000 }).sampleRate).toBe(48000);
  });
});

/** Long silences: 110 pauses of 99.99 s make more than the 3 h one request may ask for. */
const PAUSED = (n: number) => `${'Go.<#99.99#>'.repeat(n)}End.`;
const usageOf = (accountId: string) => (speechArea(emu) as unknown as StateArea).view?.(accountId) as { requests: number; usage_characters: number };
const start = (who: Account, fields: Record<string, unknown>) => startSynthesis(emu, speechArea(emu), who, request(fields), new AbortController().signal);
const startRefusal = (who: Account, fields: Record<string, unknown>) => rejected(start(who, fields));

describe('startSynthesis: after the plan, the checks in order', () => {
  it('size cap: audio longer than 3 h', async () => {
    const who = emu.accounts.put('synthesis-long', {});
    expect(await startRefusal(who, { text: PAUSED(110) })).toMatchObject({
      code: 2013,
      message: "invalid params, text: the audio would last 11016 s, over the emulator's limit of 10800 s per request (pause markers and line breaks add up)",
    });
  });

  it('size cap: audio too large to return as hex inside JSON', async () => {
    const who = emu.accounts.put('synthesis-large', {});
    const wav = { audio_setting: { format: 'wav', sample_rate: 44100, channel: 2 } };
    expect(await startRefusal(who, { text: PAUSED(13), ...wav })).toMatchObject({
      code: 2013,
      message:
        'invalid params, audio_setting: the audio would be about 219 MB, over the emulator\'s 200 MB limit for audio returned as hex inside JSON; ask for output_format "url", stream with stream_options.exclude_aggregated_audio, or a compressed format',
    });
    // The same audio as a link is not inline: it passes.
    await expect(start(who, { text: PAUSED(13), ...wav, output_format: 'url' })).resolves.toBeDefined();
  });

  it('balance: used up (1008)', async () => {
    const who = emu.accounts.put('synthesis-empty', { balance_micro: 0 });
    expect(await startRefusal(who, {})).toMatchObject({ code: 1008, message: 'insufficient balance' });
  });

  it('balance: one micro-unit short of the price (1008), nothing taken', async () => {
    const price = plan({}).priceMicro;
    const who = emu.accounts.put('synthesis-short', { balance_micro: price - 1 });
    expect(await startRefusal(who, {})).toMatchObject({ code: 1008, message: 'insufficient balance' });
    expect(who.balanceMicro).toBe(price - 1);
    expect(usageOf(who.id).requests).toBe(0);
  });

  it('requests_per_minute: the window full (1002), open again a minute later', async () => {
    const who = emu.accounts.put('synthesis-rpm', { limits: { requests_per_minute: 1 } });
    emu.clock.freeze(true);
    try {
      await start(who, {});
      expect(await startRefusal(who, {})).toMatchObject({ code: 1002, message: 'rate limit exceeded(RPM)' });
      emu.clock.advance(60_000);
      await expect(start(who, {})).resolves.toBeDefined();
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('characters_per_minute: the characters over the window (1039)', async () => {
    const characters = plan({}).usageCharacters;
    const who = emu.accounts.put('synthesis-cpm', { limits: { characters_per_minute: characters * 2 - 1 } });
    emu.clock.freeze(true);
    try {
      await start(who, {});
      expect(await startRefusal(who, {})).toMatchObject({ code: 1039, message: 'token limit' });
      expect(usageOf(who.id).requests).toBe(1);
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('order: the plan is refused before anything else', async () => {
    const who = emu.accounts.put('synthesis-order-plan', { balance_micro: 0 });
    expect(await startRefusal(who, { text: '' })).toMatchObject({ code: 2013, message: 'invalid params, text is required and must not be empty' });
  });

  it('order: the size cap before the balance', async () => {
    const who = emu.accounts.put('synthesis-order-size', { balance_micro: 0 });
    expect(await startRefusal(who, { text: PAUSED(110) })).toMatchObject({
      code: 2013,
      message: expect.stringMatching(/^invalid params, text: the audio would last 11016 s/),
    });
  });

  it('order: the balance before the request window', async () => {
    const who = emu.accounts.put('synthesis-order-balance', { balance_micro: 0, limits: { requests_per_minute: 1 } });
    expect(await startRefusal(who, {})).toMatchObject({ code: 1008 });
    // The refusal took no place in the window.
    emu.accounts.put('synthesis-order-balance', { balance_micro: 1_000_000 });
    await expect(start(who, {})).resolves.toBeDefined();
  });

  it('order: the request window before the character window', async () => {
    const characters = plan({}).usageCharacters;
    const who = emu.accounts.put('synthesis-order-rpm', { limits: { requests_per_minute: 1, characters_per_minute: characters + 1 } });
    emu.clock.freeze(true);
    try {
      await start(who, {});
      expect(await startRefusal(who, {})).toMatchObject({ code: 1002 });
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('a request that passes every check is charged its price and counted once; opus gets its Ogg serial', async () => {
    const who = emu.accounts.put('synthesis-ok', { balance_micro: 1_000_000 });
    const { plan: p, synth } = await start(who, {});
    expect(p).toMatchObject({ model: 'speech-02-hd', format: 'mp3', sampleRate: 32000, serial: undefined });
    expect(synth.durationMs).toBeGreaterThan(0);
    expect(who.balanceMicro).toBe(1_000_000 - p.priceMicro);
    expect(usageOf(who.id)).toMatchObject({ requests: 1, usage_characters: p.usageCharacters });
    const opusStart = await start(who, { audio_setting: { format: 'opus' } });
    expect(opusStart.plan.serial).toEqual(expect.any(Number));
    expect(usageOf(who.id).requests).toBe(2);
  });
});
