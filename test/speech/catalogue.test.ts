import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { req, t2a, VOICE } from './helpers.js';

const pcm8k = { audio_setting: { format: 'pcm', sample_rate: 8000 } };
const { emu } = emulatorForFile({ resetEach: true });
const msg = (r: Awaited<ReturnType<typeof t2a>>) => r.body.base_resp.status_msg as string;
const code = (r: Awaited<ReturnType<typeof t2a>>) => r.body.base_resp.status_code as number;
/** Duration of 8 kHz mono PCM audio in ms. */
const pcmMs = (r: Awaited<ReturnType<typeof t2a>>) => (Buffer.from(r.body.data.audio, 'hex').length / 2 / 8000) * 1000;

describe('the model catalogue of /v1/t2a_v2', () => {
  it('accepts the eight current models and the legacy aliases; refuses the 2.5 previews naming the models', async () => {
    const url = emu.speechUrl;
    const models = [
      'speech-2.8-hd',
      'speech-2.8-turbo',
      'speech-2.6-hd',
      'speech-2.6-turbo',
      'speech-02-hd',
      'speech-02-turbo',
      'speech-01-hd',
      'speech-01-turbo',
      'speech-01-240228',
      'speech-01-turbo-240228',
    ];
    for (const model of models) expect(code(await t2a(url, req({ ...pcm8k, model }, 'Hi'))), model).toBe(0);
    for (const model of ['speech-2.5-hd-preview', 'speech-2.5-turbo-preview']) {
      const r = await t2a(url, req({ ...pcm8k, model }, 'Hi'));
      expect(code(r)).toBe(2013);
      expect(msg(r)).toBe(
        `invalid params, model must be one of speech-2.8-hd, speech-2.8-turbo, speech-2.6-hd, speech-2.6-turbo, speech-02-hd, speech-02-turbo, speech-01-hd, speech-01-turbo (got ${model})`,
      );
    }
  });

  it('emotions per model: fluent on 2.8, whisper not on 2.8, auto nowhere, each refusal listing what the model accepts', async () => {
    const url = emu.speechUrl;
    const withEmotion = (model: string, emotion: string) => t2a(url, req({ ...pcm8k, model, voice_setting: { voice_id: VOICE, emotion } }, 'Hi'));
    expect(code(await withEmotion('speech-2.8-hd', 'fluent'))).toBe(0);
    expect(code(await withEmotion('speech-2.6-hd', 'whisper'))).toBe(0);
    const whisper = await withEmotion('speech-2.8-turbo', 'whisper');
    expect(code(whisper)).toBe(2013);
    expect(msg(whisper)).toBe(
      'invalid params, voice_setting.emotion whisper is not supported by speech-2.8-turbo; it accepts happy, sad, angry, fearful, disgusted, surprised, calm, fluent',
    );
    const auto = await withEmotion('speech-2.6-hd', 'auto');
    expect(code(auto)).toBe(2013);
    expect(msg(auto)).toBe(
      'invalid params, voice_setting.emotion auto is not supported by speech-2.6-hd; it accepts happy, sad, angry, fearful, disgusted, surprised, calm, fluent, whisper',
    );
  });

  it('speech-2.8 makes interjection tags short sounds; other models read them as text', async () => {
    const url = emu.speechUrl;
    const dur = async (model: string, text: string) => pcmMs(await t2a(url, req({ ...pcm8k, model }, text)));
    // Read as text, "(laughs)" and "(lalala)" are two six-letter words: the same length of audio.
    expect(await dur('speech-02-hd', 'Well (laughs) then.')).toBe(await dur('speech-02-hd', 'Well (lalala) then.'));
    // On 2.8 "(laughs)" is the laugh sound (0.9 s), longer than the word; an unknown name is still read.
    const laugh = await dur('speech-2.8-hd', 'Well (laughs) then.');
    const word = await dur('speech-2.8-hd', 'Well (lalala) then.');
    expect(word).toBe(await dur('speech-02-hd', 'Well (lalala) then.'));
    expect(laugh).toBeGreaterThan(word + 300);
    // Different tags are different sounds.
    expect(await dur('speech-2.8-hd', 'Well (snorts) then.')).toBeLessThan(laugh - 300);
  });

  it('speech-01 and speech-02 refuse the Persian, Filipino and Tamil boosts; 2.6 and 2.8 take them', async () => {
    const url = emu.speechUrl;
    const r = await t2a(url, req({ ...pcm8k, model: 'speech-02-hd', language_boost: 'Tamil' }, 'Hi'));
    expect(msg(r)).toBe('invalid params, language_boost Tamil is not supported by speech-02-hd (it does not support Persian, Filipino, Tamil)');
    expect(code(await t2a(url, req({ ...pcm8k, model: 'speech-2.8-hd', language_boost: 'Tamil' }, 'Hi')))).toBe(0);
    expect(code(await t2a(url, req({ ...pcm8k, model: 'speech-01-turbo', language_boost: 'English' }, 'Hi')))).toBe(0);
  });

  it('timbre_weights is another spelling of timber_weights; both in one request is 2013', async () => {
    const url = emu.speechUrl;
    const mix = [
      { voice_id: VOICE, weight: 60 },
      { voice_id: 'female-shaonv', weight: 40 },
    ];
    const a = await t2a(url, { model: 'speech-2.8-hd', text: 'Mixed voices.', timbre_weights: mix, voice_setting: { voice_id: '' }, ...pcm8k });
    const b = await t2a(url, { model: 'speech-2.8-hd', text: 'Mixed voices.', timber_weights: mix, voice_setting: { voice_id: '' }, ...pcm8k });
    expect(code(a)).toBe(0);
    expect(a.body.data.audio).toBe(b.body.data.audio);
    const both = await t2a(url, { model: 'speech-2.8-hd', text: 'Mixed.', timbre_weights: mix, timber_weights: mix, ...pcm8k });
    expect(code(both)).toBe(2013);
    expect(msg(both)).toBe('invalid params, timber_weights and timbre_weights are two spellings of one field: give only one of them');
  });

  it("pronunciation_dict given as an array is 2013 with the real service's text (E17)", async () => {
    const url = emu.speechUrl;
    const r = await t2a(url, req({ ...pcm8k, pronunciation_dict: [{ tone: ['omg/oh my god'], text: 'omg' }] }, 'omg'));
    expect(code(r)).toBe(2013);
    expect(msg(r)).toBe('invalid params, Mismatch type open_platform.PronunciationDict with value array');
  });

  it('a user adds a model and an emotion through the fixtures folder, without code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'speech-models-'));
    try {
      const base = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/speech-models.json'), 'utf8'));
      base.models.push({ model: 'speech-3.0-hd', emotions: ['happy', 'excited'], interjection_tags: true });
      writeFileSync(join(dir, 'speech-models.json'), JSON.stringify(base));
      // An emulator of its own, started on that folder.
      const other = await startTestEmulator({ fixturesDir: dir });
      try {
        const url = other.speechUrl;
        expect(code(await t2a(url, req({ ...pcm8k, model: 'speech-3.0-hd', voice_setting: { voice_id: VOICE, emotion: 'excited' } }, 'Hi')))).toBe(0);
        const sad = await t2a(url, req({ ...pcm8k, model: 'speech-3.0-hd', voice_setting: { voice_id: VOICE, emotion: 'sad' } }, 'Hi'));
        expect(msg(sad)).toBe('invalid params, voice_setting.emotion sad is not supported by speech-3.0-hd; it accepts happy, excited');
        expect(msg(await t2a(url, req({ ...pcm8k, model: 'speech-9' }, 'Hi')))).toMatch(/speech-01-turbo, speech-3\.0-hd \(got speech-9\)$/);
      } finally {
        await other.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a broken catalogue stops the start naming the file and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'speech-models-'));
    try {
      writeFileSync(join(dir, 'speech-models.json'), JSON.stringify({ models: [{ model: 'm', emotions: [] }], interjection_tags: { laughs: 'giggles' } }));
      await expect(startTestEmulator({ fixturesDir: dir })).rejects.toThrow(/speech-models\.json: field interjection_tags\.laughs/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
