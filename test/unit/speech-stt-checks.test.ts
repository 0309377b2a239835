// Speech to text (speech/stt/model.ts, rules E1-E4) called directly: one test per check, in the order the model runs them.
import { beforeAll, describe, expect, it } from 'vitest';
import { bufferSource, type ByteSource } from '../../src/audio/container.js';
import type { Emulator } from '../../src/core/emulator.js';
import { admitAudio, charge, checkContent, checkForm, readAudio, sttArea, SttError, tooLarge, type SttForm } from '../../src/services/speech/stt/model.js';
import { EMPTY, type Transcript } from '../../src/services/speech/stt/transcript.js';
import { pcm16Wav } from '../helpers/audio.js';
import { accountOf, modelEmulator, thrown } from './model-emulator.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});

const LANGUAGE_CODES = 'zh, yue, en, ja, ko, th, vi, id, ms, fil, ar, tr, fr, de, es, it, pt, pl, ru, uk';

function form(fields: Record<string, string | undefined>, fileParts = 1, languageHeader?: string): SttForm {
  const all: Record<string, string | undefined> = { model: 'asr-1.0', ...fields };
  const present = Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined);
  return { fields: new Map(present), fileParts, languageHeader };
}
const formRefusal = (fields: Record<string, string | undefined>, fileParts = 1, languageHeader?: string) =>
  thrown(() => checkForm(form(fields, fileParts, languageHeader)));
const badParams = (detail: string) => ({ status: 400, code: 2013, message: `invalid params, ${detail}` });

describe('checkForm (E1): the form and the language header, in order', () => {
  it('model: missing', () => {
    expect(formRefusal({ model: undefined })).toMatchObject(badParams('model is required; use asr-1.0'));
  });

  it('model: empty counts as missing', () => {
    expect(formRefusal({ model: '' })).toMatchObject(badParams('model is required; use asr-1.0'));
  });

  it('model: another one', () => {
    expect(formRefusal({ model: 'whisper-1' })).toMatchObject(badParams('model "whisper-1" is not supported; use asr-1.0'));
  });

  it('file: no file part', () => {
    expect(formRefusal({}, 0)).toMatchObject(badParams('file is required (one file part named file)'));
  });

  it('file: more than one file part', () => {
    expect(formRefusal({}, 2)).toMatchObject(badParams('file must be sent exactly once (got 2 file parts)'));
  });

  it('response_format: outside json, verbose_json, srt, vtt', () => {
    expect(formRefusal({ response_format: 'text' })).toMatchObject(
      badParams('response_format "text" is not supported; use one of json, verbose_json, srt, vtt'),
    );
  });

  it('timestamp_level: outside "", sentence, word', () => {
    expect(formRefusal({ timestamp_level: 'segment' })).toMatchObject(badParams('timestamp_level "segment" is not supported; use one of "", sentence, word'));
  });

  it('stream: neither true nor false', () => {
    expect(formRefusal({ stream: 'yes' })).toMatchObject(badParams('stream "yes" must be true or false'));
  });

  it('stream: true with a format other than json names both fields', () => {
    expect(formRefusal({ stream: 'TRUE', response_format: 'srt' })).toMatchObject(
      badParams('stream=true requires response_format json (got response_format "srt")'),
    );
  });

  it('language header: a region-suffixed tag is none of the 20 codes', () => {
    expect(formRefusal({}, 1, 'en-US')).toMatchObject(
      badParams(`language header "en-US" is not supported; use one of ${LANGUAGE_CODES}, or none for mixed mode`),
    );
  });

  it('order: the model is checked before the file part', () => {
    expect(formRefusal({ model: 'whisper-1' }, 0)).toMatchObject({ message: expect.stringMatching(/^invalid params, model "whisper-1"/) });
  });

  it('order: the file part before response_format', () => {
    expect(formRefusal({ response_format: 'text' }, 2)).toMatchObject({ message: expect.stringMatching(/^invalid params, file must be sent exactly once/) });
  });

  it('order: response_format before timestamp_level', () => {
    expect(formRefusal({ response_format: 'text', timestamp_level: 'segment' })).toMatchObject({
      message: expect.stringMatching(/^invalid params, response_format "text"/),
    });
  });

  it('order: the stream value before the language header', () => {
    expect(formRefusal({ stream: 'yes' }, 1, 'xx')).toMatchObject({ message: 'invalid params, stream "yes" must be true or false' });
  });

  it('a valid form: defaults json, sentence, no stream, mixed mode; the header is compared case-insensitively', () => {
    expect(checkForm(form({}))).toEqual({ responseFormat: 'json', level: 'sentence', stream: false, language: undefined });
    expect(checkForm(form({ response_format: 'verbose_json', timestamp_level: 'word', stream: 'False', language: 'ignored' }, 1, ' JA '))).toEqual({
      responseFormat: 'verbose_json',
      level: 'word',
      stream: false,
      language: 'ja',
    });
    expect(checkForm(form({ timestamp_level: '', stream: 'true' }, 1, ''))).toMatchObject({ level: 'sentence', stream: true, language: undefined });
  });
});

describe('tooLarge (E1 size): the file part over 52,428,800 bytes', () => {
  it('is 413 without a code, with the real service text', () => {
    const err = tooLarge(52_428_801);
    expect(err).toBeInstanceOf(SttError);
    expect(err).toMatchObject({ status: 413, code: null, message: 'request body too large: 52428801 bytes exceeds limit of 52428800 bytes' });
  });
});

/** A WAV source of `dataBytes` of silence at 8 kHz whose samples are zeros read on demand (no big buffer). */
function silentWav(dataBytes: number, sampleRate = 8000): ByteSource {
  const header = pcm16Wav(0, sampleRate);
  header.writeUInt32LE(36 + dataBytes, 4);
  header.writeUInt32LE(dataBytes, 40);
  const size = header.length + dataBytes;
  return {
    size,
    bytes(offset, length) {
      const out = Buffer.alloc(Math.max(0, Math.min(size, offset + length) - offset));
      header.copy(out, 0, offset, Math.min(header.length, offset + out.length));
      return out;
    },
  };
}
const audioRefusal = (src: ByteSource) => thrown(() => readAudio(src));

describe('readAudio (E1 container and duration), in order', () => {
  it('file: empty', () => {
    expect(audioRefusal(bufferSource(Buffer.alloc(0)))).toMatchObject(badParams('file is empty'));
  });

  it('container: bytes of no known container (raw PCM, WebM…)', () => {
    expect(audioRefusal(bufferSource(Buffer.from('just some text, not audio at all')))).toMatchObject(badParams('unsupported audio format'));
  });

  it('container: a recognised container that cannot be parsed', () => {
    const broken = pcm16Wav(1600);
    broken.writeUInt32LE(0, 24); // a sample rate of 0
    expect(audioRefusal(bufferSource(broken))).toMatchObject(badParams('audio could not be decoded'));
  });

  it('container: a header cut where a field should be', () => {
    expect(audioRefusal(bufferSource(pcm16Wav(0).subarray(0, 20)))).toMatchObject(badParams('audio could not be decoded'));
  });

  it('duration: over 500.0 s, compared at 0.1 s', () => {
    expect(audioRefusal(silentWav(8000 * 2 * 500 + 1600))).toMatchObject(badParams('audio duration 500.1s exceeds the limit of 500s'));
  });

  it('order: an unsupported container is named before anything about its length', () => {
    expect(audioRefusal({ size: 100_000_000, bytes: (_o, l) => Buffer.alloc(l, 0x41) })).toMatchObject(badParams('unsupported audio format'));
  });

  it('exactly 500.0 s passes, with its container and duration', () => {
    expect(readAudio(silentWav(8000 * 2 * 500))).toMatchObject({ container: 'wav', codec: 'pcm', duration: 500, sampleRate: 8000, channels: 1 });
    expect(readAudio(silentWav(8000 * 2 * 500 + 640)).duration).toBeCloseTo(500.04); // 500.0 at 0.1 s
  });
});

describe('admitAudio (E4): the balance at 2.50 yuan an hour, then the speech_to_text window, in order', () => {
  it('balance: used up (402/1008)', () => {
    const account = emu.accounts.put('stt-empty', { balance_micro: 0 });
    expect(thrown(() => admitAudio(emu, account, 1000))).toMatchObject({ status: 402, code: 1008, message: 'insufficient balance' });
  });

  it('balance: short of the price of the audio (402/1008)', () => {
    // An hour costs 2,500,000 micro-units: 2,499,999 cannot pay for it.
    const account = emu.accounts.put('stt-short', { balance_micro: 2_499_999 });
    expect(thrown(() => admitAudio(emu, account, 3_600_000))).toMatchObject({ status: 402, code: 1008, message: 'insufficient balance' });
    expect(admitAudio(emu, account, 3_599_000)).toBe(2_499_306);
  });

  it('speech_to_text_per_minute: the window full (429/1002), open again a minute later', () => {
    const account = emu.accounts.put('stt-window', { limits: { speech_to_text_per_minute: 2 } });
    emu.clock.freeze(true);
    try {
      expect(admitAudio(emu, account, 1000)).toBe(695);
      expect(admitAudio(emu, account, 1000)).toBe(695);
      expect(thrown(() => admitAudio(emu, account, 1000))).toMatchObject({ status: 429, code: 1002, message: 'rate limit, please retry later' });
      emu.clock.advance(60_000);
      expect(admitAudio(emu, account, 1000)).toBe(695);
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('order: the balance is checked before the window, and a refusal takes no place in it', () => {
    const account = emu.accounts.put('stt-poor-window', { balance_micro: 0, limits: { speech_to_text_per_minute: 1 } });
    expect(thrown(() => admitAudio(emu, account, 1000))).toMatchObject({ code: 1008 });
    emu.accounts.put('stt-poor-window', { balance_micro: 1_000_000 });
    expect(admitAudio(emu, account, 1000)).toBe(695);
  });

  it('no window is configured by default: the price, rounded up to a micro-unit', () => {
    const account = accountOf(emu, 'stt-default');
    for (let i = 0; i < 5; i++) expect(admitAudio(emu, account, 1)).toBe(1);
  });
});

const said = (text: string): Transcript => ({ sentences: [{ startMs: 0, endMs: 1000, speaker: 'S1', text }], words: [], source: 'fixture' });

describe('checkContent (E4): a content-safety term in the transcript', () => {
  it('is 422/1026, whatever its case', () => {
    expect(thrown(() => checkContent(emu, said('We talked about a Forbidden-Topic today.')))).toMatchObject({
      status: 422,
      code: 1026,
      message: 'audio content contains sensitive content',
    });
  });

  it('a transcript without one, or an empty one, passes', () => {
    expect(() => checkContent(emu, said('A perfectly ordinary sentence.'))).not.toThrow();
    expect(() => checkContent(emu, EMPTY)).not.toThrow();
  });
});

describe('charge (E4 billing): the price, and usage in seconds of audio', () => {
  it('takes the price from the balance and counts the seconds', () => {
    const account = emu.accounts.put('stt-charge', { balance_micro: 10_000 });
    charge(emu, account, 695, 1000);
    charge(emu, account, 1, 1.5);
    expect(account.balanceMicro).toBe(10_000 - 696);
    expect(sttArea(emu).view?.(account.id)).toEqual({ requests: 2, audio_seconds: 1.002 });
  });
});
