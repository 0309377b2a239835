// Recognition rules (platform/recognition/model.ts) called directly: recognizeRequest one test per check,
// in the order the model runs them (Base64, size, sample alignment, length, balance, request window),
// and the stream's message rules (streamBeforeMeta, streamAudioRefusal).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { recognizeRequest, streamAudioRefusal, streamBeforeMeta } from '../../src/services/platform/recognition/model.js';
import type { SpeechToTextRequest } from '../../src/services/platform/recognition/schema.js';
import { appendPcm, MAX_UTTERANCE_MS, newUtterance } from '../../src/services/platform/shared/utterance.js';
import { accountOf, modelEmulator, rejected } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});

/** Base64 of `bytes` bytes of silence (PCM16 16 kHz mono: 32 bytes a millisecond). */
const silence = (bytes: number) => Buffer.alloc(bytes).toString('base64');
const TWO_SECONDS = 64_000;
const recognize = (key: string, fields: Partial<SpeechToTextRequest>) =>
  recognizeRequest(emu, accountOf(emu, key), { audio_data: silence(TWO_SECONDS), ...fields } as SpeechToTextRequest);
const refusal = (key: string, fields: Partial<SpeechToTextRequest>) => rejected(recognize(key, fields));
const param = (message: string) => ({ family: 'recognition', codeOrKind: 'param', code: 10001, message }) as const;

describe('recognizeRequest: the checks in order', () => {
  it('recognizeRequest: audio_data not Base64 → 10001', async () => {
    expectRefusal(await refusal('rec', { audio_data: 'AAAA@@@@' }), param('audio_data is not valid Base64'));
  });

  it('recognizeRequest: audio_data with a dangling Base64 character → 10001', async () => {
    expectRefusal(await refusal('rec', { audio_data: 'AAAAA' }), param('audio_data is not valid Base64'));
  });

  it('recognizeRequest: audio_data over 50 MB (decimal) → 10001, before its alignment is looked at', async () => {
    // 50,000,001 bytes: too large and odd; the size is named.
    expectRefusal(await refusal('rec', { audio_data: silence(50_000_001) }), param('audio_data holds more than 50 MB of audio'));
  });

  it('recognizeRequest: audio_data an odd number of bytes → 10001', async () => {
    expectRefusal(await refusal('rec', { audio_data: silence(TWO_SECONDS + 1) }), param('audio_data must hold whole 16-bit samples (an even number of bytes)'));
  });

  it('recognizeRequest: audio_data under 2 s of PCM → 20014', async () => {
    // One sample short of 2 s: the text rounds down to whole milliseconds, so it never reads as the minimum.
    expectRefusal(await refusal('rec', { audio_data: silence(TWO_SECONDS - 2) }), {
      family: 'recognition',
      codeOrKind: 20014,
      code: 20014,
      message: 'audio_data is 1999 ms of PCM; at least 2000 ms (16 kHz mono PCM16) is required',
    });
    expectRefusal(await refusal('rec', { audio_data: silence(32_000) }), {
      family: 'recognition',
      codeOrKind: 20014,
      code: 20014,
      message: 'audio_data is 1000 ms of PCM; at least 2000 ms (16 kHz mono PCM16) is required',
    });
  });

  it('recognizeRequest: balance short of the price (500 micro-units a second) → 20003', async () => {
    emu.accounts.put('rec-poor', { balance_micro: 999 });
    expectRefusal(await refusal('rec-poor', {}), {
      family: 'recognition',
      codeOrKind: 'balance',
      code: 20003,
      message: 'insufficient balance for recognition',
    });
    expect(accountOf(emu, 'rec-poor').balanceMicro).toBe(999);
  });

  it("recognizeRequest: the account's requests_per_minute reached → 10014", async () => {
    emu.accounts.put('rec-rpm', { limits: { requests_per_minute: 1 } });
    await recognize('rec-rpm', {});
    expectRefusal(await refusal('rec-rpm', {}), {
      family: 'recognition',
      codeOrKind: 'rate',
      code: 10014,
      message: 'request rate exceeded: at most 1 recognition requests per minute for this API key',
    });
  });

  it('recognizeRequest: a request that passes every check is charged and recognised (silence → empty text)', async () => {
    const account = accountOf(emu, 'rec-ok');
    const before = account.balanceMicro;
    const result = await recognize('rec-ok', { language: ' en ' });
    expect(result).toMatchObject({ text: '', language: 'en', duration_ms: 2000 });
    expect(account.balanceMicro).toBe(before - 1000);
  });

  it('recognizeRequest: the order — Base64 before alignment, alignment before length', async () => {
    expect(messageOf(await refusal('rec', { audio_data: `${silence(3)}!` }))).toBe('audio_data is not valid Base64');
    expect(messageOf(await refusal('rec', { audio_data: silence(3) }))).toBe('audio_data must hold whole 16-bit samples (an even number of bytes)');
  });

  it('recognizeRequest: the order — length before balance, balance before the request window', async () => {
    emu.accounts.put('rec-order', { balance_micro: 0 });
    expect(messageOf(await refusal('rec-order', { audio_data: silence(2) }))).toBe(
      'audio_data is 0 ms of PCM; at least 2000 ms (16 kHz mono PCM16) is required',
    );
    // The window full and the balance gone: the balance is named.
    emu.accounts.put('rec-order', { balance_micro: 10_000, limits: { requests_per_minute: 1 } });
    await recognize('rec-order', {});
    emu.accounts.put('rec-order', { balance_micro: 0 });
    expect(messageOf(await refusal('rec-order', {}))).toBe('insufficient balance for recognition');
    emu.accounts.put('rec-order', { balance_micro: 10_000 });
    expect(messageOf(await refusal('rec-order', {}))).toMatch(/^request rate exceeded: /);
  });
});

describe('recognition stream: the message rules in order', () => {
  it('streamBeforeMeta: is_final before the meta message → 10001', () => {
    expectRefusal(streamBeforeMeta('is_final'), param('meta: the first message must be {meta:{audio_format, language}}, not is_final'));
  });

  it('streamBeforeMeta: binary audio before the meta message → 10001', () => {
    expectRefusal(streamBeforeMeta('audio'), param('binary audio arrived before the meta message'));
  });

  it(`streamAudioRefusal: more than ${MAX_UTTERANCE_MS / 1000} s of PCM in all → 10001`, () => {
    const utterance = newUtterance();
    appendPcm(utterance, Buffer.alloc((MAX_UTTERANCE_MS / 1000) * 32_000));
    expect(streamAudioRefusal(utterance)).toBeNull();
    appendPcm(utterance, Buffer.alloc(2));
    expectRefusal(streamAudioRefusal(utterance), param('audio: a stream may carry at most 300 s'));
  });

  it('streamAudioRefusal: a stream within the limit passes (an empty one too)', () => {
    const utterance = newUtterance();
    expect(streamAudioRefusal(utterance)).toBeNull();
    appendPcm(utterance, Buffer.alloc(64_000));
    expect(streamAudioRefusal(utterance)).toBeNull();
  });
});
