// Voice cloning and voice design (speech/clone/model.ts, speech/design/model.ts) called directly: one test
// per check, in the order each model runs them, with the files uploaded straight into the file store.
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeAudio, synthesizeStream } from '../../src/audio/index.js';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { cloneVoice, FORBIDDEN } from '../../src/services/speech/clone/model.js';
import type { CloneBody } from '../../src/services/speech/clone/schema.js';
import { designVoice } from '../../src/services/speech/design/model.js';
import type { DesignBody } from '../../src/services/speech/design/schema.js';
import type { FileFormat } from '../../src/services/speech/files/purposes.js';
import { planRequest, recordSignature } from '../../src/services/speech/model.js';
import type { T2aRequest } from '../../src/services/speech/schema.js';
import { voiceRecord } from '../../src/services/speech/voices/store.js';
import { pcm16Wav } from '../helpers/audio.js';
import { accountOf, modelEmulator, rejected } from './model-emulator.js';
import { upload as uploadFile } from './speech-uploads.js';

let emu: Emulator;
let account: Account;
/** Files of `account`: a 10 s sample, a 9 s one, a 301 s one, a 2 s prompt, an 8 s prompt, the emulator's own words as a prompt. */
const files = {} as Record<'sample' | 'short' | 'long' | 'prompt' | 'longPrompt' | 'spokenPrompt' | 'promptAsSample' | 'retrieval' | 'notAudio', number>;
const SPOKEN = 'The quick brown fox jumps over the lazy dog.';

/** Stores bytes as an upload of the account. */
const upload = (who: Account, purpose: string, bytes: Buffer, format: FileFormat = 'wav') => uploadFile(emu, who, purpose, bytes, format);

/** Silence of `seconds` at 8 kHz. */
const silence = (seconds: number) => pcm16Wav(seconds * 8000 * 2, 8000);

/** Audio the emulator spoke (its signature recorded), as a WAV. */
async function spoken(text: string): Promise<Buffer> {
  const request = { model: 'speech-02-hd', text, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'wav', sample_rate: 16000 } };
  const plan = planRequest(emu, account, request as T2aRequest);
  const synth = synthesizeStream(plan.input);
  recordSignature(emu, plan, synth);
  return (await encodeAudio('wav', synth, { sampleRate: 16000, channels: 1, bitrate: 128000 })).bytes;
}

beforeAll(async () => {
  emu = await modelEmulator();
  account = accountOf(emu, 'voice-checks-key');
  files.sample = await upload(account, 'voice_clone', silence(10));
  files.short = await upload(account, 'voice_clone', silence(9));
  files.long = await upload(account, 'voice_clone', silence(301));
  files.prompt = await upload(account, 'prompt_audio', silence(2));
  files.longPrompt = await upload(account, 'prompt_audio', silence(8));
  files.spokenPrompt = await upload(account, 'prompt_audio', await spoken(SPOKEN));
  files.promptAsSample = await upload(account, 'prompt_audio', silence(10));
  files.retrieval = await upload(account, 'retrieval', Buffer.from('notes'), 'txt');
  files.notAudio = await upload(account, 'voice_clone', Buffer.from('these bytes are no audio at all'));
});

let nextVoice = 0;
/** A fresh, well-formed voice id for each test (ids are global and never reused). */
const freshId = () => `CheckVoice${String(++nextVoice).padStart(3, '0')}`;
const clone = (fields: Record<string, unknown>, who = account) => cloneVoice(emu, who, { file_id: files.sample, voice_id: freshId(), ...fields } as CloneBody);
const cloneRefusal = (fields: Record<string, unknown>, who = account) => rejected(clone(fields, who));
const invalid = (detail: string) => ({ code: 2013, message: `invalid params, ${detail}` });
const badSample = (detail: string) => ({ code: 20132, message: `invalid samples or voice_id, ${detail}` });
const unknownFile = (field: string, id: number) => badSample(`${field} ${id} is not a file of this account (unknown, deleted, expired or not ready yet)`);

/** The documented form of a caller-chosen voice id, one case per rule in the order checked (voices/ids.ts). */
const BAD_VOICE_IDS = [
  { rule: 'voice_id: shorter than 8 characters', voiceId: 'Short01', detail: 'voice_id must be 8 to 256 characters (got 7)' },
  { rule: 'voice_id: longer than 256 characters', voiceId: `V${'a'.repeat(256)}`, detail: 'voice_id must be 8 to 256 characters (got 257)' },
  { rule: 'voice_id: not starting with an ASCII letter', voiceId: '1VoiceStartsWithDigit', detail: 'voice_id must start with an ASCII letter' },
  { rule: 'voice_id: a character other than letters, digits, - and _', voiceId: 'Voice.With.Dots', detail: 'voice_id may hold only letters, digits, - and _' },
  { rule: 'voice_id: ending with - or _', voiceId: 'TrailingVoice_', detail: 'voice_id must not end with - or _' },
  // Order: a short id that also starts with a digit is named for its length first.
  { rule: 'order: the length before the first character', voiceId: '1Short', detail: 'voice_id must be 8 to 256 characters (got 6)' },
];

describe('cloneVoice (rule 12.10): the checks in order', () => {
  it.each(BAD_VOICE_IDS)('$rule', async ({ voiceId, detail }) => {
    expect(await cloneRefusal({ voice_id: voiceId })).toMatchObject(invalid(detail));
  });

  it('text: given but blank', async () => {
    expect(await cloneRefusal({ text: '   ', model: 'speech-02-hd' })).toMatchObject(invalid('text must not be empty when given'));
  });

  it('model: missing while text is given', async () => {
    expect(await cloneRefusal({ text: 'Read this.' })).toMatchObject(invalid('model is required when text is given'));
  });

  it('account: real-name verification not done (2038)', async () => {
    const unverified = emu.accounts.put('voice-unverified', { real_name_verified: false });
    expect(await cloneRefusal({}, unverified)).toMatchObject({ code: 2038, message: FORBIDDEN });
  });

  it('voice_id: taken by a system voice (2039)', async () => {
    expect(await cloneRefusal({ voice_id: 'Wise_Woman' })).toMatchObject({ code: 2039, message: 'voice clone voice id duplicate: Wise_Woman' });
  });

  it('voice_id: taken by a voice cloned before (2039)', async () => {
    const voiceId = freshId();
    await clone({ voice_id: voiceId });
    expect(await cloneRefusal({ voice_id: voiceId })).toMatchObject({ code: 2039, message: `voice clone voice id duplicate: ${voiceId}` });
  });

  it('file_id: no file of this account (20132)', async () => {
    expect(await cloneRefusal({ file_id: 999 })).toMatchObject(unknownFile('file_id', 999));
  });

  it("file_id: another account's file is answered like an unknown one (20132)", async () => {
    const other = accountOf(emu, 'voice-other-key');
    expect(await cloneRefusal({}, other)).toMatchObject(unknownFile('file_id', files.sample));
  });

  it('file_id: a retrieval upload (2013)', async () => {
    expect(await cloneRefusal({ file_id: files.retrieval })).toMatchObject(
      invalid(`file_id ${files.retrieval} was uploaded with purpose retrieval, which synthesis and voice cloning do not accept`),
    );
  });

  it('file_id: uploaded with another purpose (20132)', async () => {
    expect(await cloneRefusal({ file_id: files.promptAsSample })).toMatchObject(
      badSample(`file_id ${files.promptAsSample} was uploaded with purpose prompt_audio, not voice_clone`),
    );
  });

  it('file_id: bytes that are no audio (20132)', async () => {
    expect(await cloneRefusal({ file_id: files.notAudio })).toMatchObject(
      badSample(`file_id ${files.notAudio} cannot be read as audio (unrecognised audio format)`),
    );
  });

  it('sample: under 10 s (2037)', async () => {
    expect(await cloneRefusal({ file_id: files.short })).toMatchObject({
      code: 2037,
      message: 'voice duration too short: the sample lasts 9.0 s, at least 10 s is needed',
    });
  });

  it('sample: over 5 minutes (2037)', async () => {
    expect(await cloneRefusal({ file_id: files.long })).toMatchObject({
      code: 2037,
      message: 'voice duration too long: the sample lasts 301.0 s, at most 300 s is allowed',
    });
  });

  it('clone_prompt.prompt_audio: no file of this account (20132)', async () => {
    expect(await cloneRefusal({ clone_prompt: { prompt_audio: 42, prompt_text: 'Hello.' } })).toMatchObject(unknownFile('clone_prompt.prompt_audio', 42));
  });

  it('clone_prompt.prompt_audio: uploaded with another purpose (20132)', async () => {
    expect(await cloneRefusal({ clone_prompt: { prompt_audio: files.sample, prompt_text: 'Hello.' } })).toMatchObject(
      badSample(`clone_prompt.prompt_audio ${files.sample} was uploaded with purpose voice_clone, not prompt_audio`),
    );
  });

  it('clone_prompt.prompt_audio: 8 s or more (2048)', async () => {
    expect(await cloneRefusal({ clone_prompt: { prompt_audio: files.longPrompt, prompt_text: 'Hello.' } })).toMatchObject({
      code: 2048,
      message: 'prompt audio too long: it lasts 8.0 s, it must be under 8 s',
    });
  });

  it('text_validation: what the sample says matches below accuracy (1043)', async () => {
    expect(await cloneRefusal({ text_validation: 'Words the silent sample never says.' })).toMatchObject({
      code: 1043,
      message: 'The asr similarity check failed: text_validation matches what the sample says at 0.00, below accuracy 0.7',
    });
  });

  it('clone_prompt.prompt_text: what the emulator knows the prompt says matches below 0.7 (1044)', async () => {
    expect(await cloneRefusal({ clone_prompt: { prompt_audio: files.spokenPrompt, prompt_text: 'Something else entirely was said here.' } })).toMatchObject({
      code: 1044,
      message: 'clone prompt similarity check failed: prompt_text matches what the prompt audio says at 0.09, below 0.7',
    });
  });

  it("order: the voice id's form before text and model", async () => {
    expect(await cloneRefusal({ voice_id: 'Short01', text: 'Read this.' })).toMatchObject(invalid('voice_id must be 8 to 256 characters (got 7)'));
  });

  it('order: a blank text before the missing model', async () => {
    expect(await cloneRefusal({ text: ' ' })).toMatchObject(invalid('text must not be empty when given'));
  });

  it('order: the missing model before real-name verification', async () => {
    const unverified = emu.accounts.put('voice-unverified', { real_name_verified: false });
    expect(await cloneRefusal({ text: 'Read this.' }, unverified)).toMatchObject(invalid('model is required when text is given'));
  });

  it("order: real-name verification before the id being taken (the real service's order)", async () => {
    const unverified = emu.accounts.put('voice-unverified', { real_name_verified: false });
    expect(await cloneRefusal({ voice_id: 'Wise_Woman' }, unverified)).toMatchObject({ code: 2038 });
  });

  it('order: the id being taken before the file', async () => {
    expect(await cloneRefusal({ voice_id: 'Wise_Woman', file_id: 999 })).toMatchObject({ code: 2039 });
  });

  it("order: the sample's duration before the prompt", async () => {
    expect(await cloneRefusal({ file_id: files.short, clone_prompt: { prompt_audio: files.longPrompt, prompt_text: 'Hello.' } })).toMatchObject({
      code: 2037,
    });
  });

  it("order: the prompt's length before text_validation", async () => {
    expect(await cloneRefusal({ clone_prompt: { prompt_audio: files.longPrompt, prompt_text: 'Hello.' }, text_validation: 'Never said.' })).toMatchObject({
      code: 2048,
    });
  });

  it("order: text_validation before the prompt's words", async () => {
    expect(
      await cloneRefusal({ clone_prompt: { prompt_audio: files.spokenPrompt, prompt_text: 'Something else entirely.' }, text_validation: 'Never said.' }),
    ).toMatchObject({ code: 1043 });
  });

  it('a refused preview (the balance) leaves no voice behind', async () => {
    const poor = emu.accounts.put('voice-poor', { balance_micro: 0 });
    const sample = await upload(poor, 'voice_clone', silence(10));
    const voiceId = freshId();
    expect(await cloneRefusal({ voice_id: voiceId, file_id: sample, text: 'Read this.', model: 'speech-02-hd' }, poor)).toMatchObject({ code: 1008 });
    expect(voiceRecord(emu, voiceId)).toBeUndefined();
  });

  it('a valid clone makes the voice; with text and model, a preview too; a prompt the emulator cannot judge passes', async () => {
    const voiceId = freshId();
    expect(await clone({ voice_id: voiceId, clone_prompt: { prompt_audio: files.prompt, prompt_text: 'Whatever it says.' } })).toEqual({});
    expect(voiceRecord(emu, voiceId)).toMatchObject({ account_id: account.id });
    const withPreview = await clone({
      text: 'This is how I sound.',
      model: 'speech-02-hd',
      clone_prompt: { prompt_audio: files.spokenPrompt, prompt_text: 'the QUICK brown fox jumps over the lazy dog!' },
    });
    expect(withPreview.preview?.bytes.length).toBeGreaterThan(0);
    expect(withPreview.demoBlob).toMatch(new RegExp(`^speech-files/${account.id}/demo-[0-9a-f]{16}\\.mp3$`));
  });
});

const design = (fields: Record<string, unknown>, who = account) =>
  designVoice(emu, who, { prompt: 'A warm, calm narrator.', preview_text: 'Hello from a designed voice.', ...fields } as DesignBody);
const designRefusal = (fields: Record<string, unknown>, who = account) => rejected(design(fields, who));

describe('designVoice (rule 12.11): the checks in order', () => {
  it.each(BAD_VOICE_IDS)('$rule', async ({ voiceId, detail }) => {
    expect(await designRefusal({ voice_id: voiceId })).toMatchObject(invalid(detail));
  });

  it('voice_id: taken (2039)', async () => {
    expect(await designRefusal({ voice_id: 'Wise_Woman' })).toMatchObject({ code: 2039, message: 'voice clone voice id duplicate: Wise_Woman' });
  });

  it('preview: its text refused by the T2A rules, and the voice dropped', async () => {
    const voiceId = freshId();
    expect(await designRefusal({ voice_id: voiceId, preview_text: '?!' })).toMatchObject(
      invalid('text must contain at least one letter or digit to pronounce'),
    );
    expect(voiceRecord(emu, voiceId)).toBeUndefined();
  });

  it('preview: the balance cannot pay for it (1008), and the voice dropped', async () => {
    const poor = emu.accounts.put('voice-poor', { balance_micro: 0 });
    const voiceId = freshId();
    expect(await designRefusal({ voice_id: voiceId }, poor)).toMatchObject({ code: 1008, message: 'insufficient balance' });
    expect(voiceRecord(emu, voiceId)).toBeUndefined();
  });

  it("order: the id's form before the id being taken", async () => {
    expect(await designRefusal({ voice_id: 'Wise_Woman-' })).toMatchObject(invalid('voice_id must not end with - or _'));
  });

  it('order: the id being taken before the preview', async () => {
    expect(await designRefusal({ voice_id: 'Wise_Woman', preview_text: '?!' })).toMatchObject({ code: 2039 });
  });

  it('a valid design: the id asked for, or one made from the clock; a preview in hex', async () => {
    const voiceId = freshId();
    const asked = await design({ voice_id: voiceId });
    expect(asked.voice_id).toBe(voiceId);
    expect(asked.trial_audio).toMatch(/^([0-9a-f]{2})+$/);
    expect(voiceRecord(emu, voiceId)).toMatchObject({ account_id: account.id });
    const stamp = new Date(emu.clock.now()).toISOString().replace(/\D/g, '').slice(0, 8);
    expect((await design({})).voice_id).toMatch(new RegExp(`^ttv-voice-${stamp}\\d{8}-[A-Za-z0-9]{8}$`));
  });
});
