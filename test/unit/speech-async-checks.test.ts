// createTask (speech/async/model.ts, rule 12.12) called directly: one test per check, in the order the model
// runs them, with the text files uploaded straight into the file store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { createTask, MAX_TASK_FILES, statusOf } from '../../src/services/speech/async/model.js';
import type { AsyncBody } from '../../src/services/speech/async/schema.js';
import type { FileFormat } from '../../src/services/speech/files/purposes.js';
import { zipOf } from '../helpers/zip.js';
import { accountOf, modelEmulator, rejected } from './model-emulator.js';
import { upload as uploadFile } from './speech-uploads.js';

let emu: Emulator;
let account: Account;
beforeAll(async () => {
  emu = await modelEmulator();
  account = accountOf(emu, 'async-checks-key');
});
// The tasks accepted here make their audio in the background: it is done before the emulator goes.
afterAll(async () => {
  await emu.clock.settled();
});

/** Stores bytes as an upload of the account (an async input unless told). */
const upload = (bytes: Buffer, format: FileFormat, purpose = 't2a_async_input', who = account) => uploadFile(emu, who, purpose, bytes, format);
const uploadZip = (files: Record<string, string>) => upload(zipOf(files, 'store'), 'zip');

const base = { model: 'speech-02-hd', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } };
const create = (fields: Record<string, unknown>, who = account, opts: { fail?: boolean } = {}) =>
  createTask(emu, who, { ...base, ...fields } as AsyncBody, opts);
const refusal = (fields: Record<string, unknown>, who = account) => rejected(create(fields, who));
const invalid = (detail: string) => ({ code: 2013, message: `invalid params, ${detail}` });

/** Long silences: n pauses of 99.99 s (each text stays under the 3 h a single request may ask for). */
const PAUSED = (n: number) => `${'Go.<#99.99#>'.repeat(n)}End.`;
/** One file more than a zip may hold, all .txt but the first, which is of the kind given. */
const tooMany = (first: 'txt' | 'json') => Object.fromEntries(Array.from({ length: MAX_TASK_FILES + 1 }, (_, i) => [`f${i}.${i ? 'txt' : first}`, 'Hi.']));
const notFound = (id: number) => invalid(`text_file_id ${id} is not a file of this account (unknown, deleted, expired or not ready yet)`);

describe('createTask: the texts of the task, in order', () => {
  it('text and text_file_id: both given', async () => {
    expect(await refusal({ text_file_id: 1 })).toMatchObject(invalid('give either text or text_file_id, not both'));
  });

  it('text and text_file_id: neither given', async () => {
    expect(await refusal({ text: null })).toMatchObject(invalid('text or text_file_id is required'));
  });

  it('text: more than 50,000 characters', async () => {
    expect(await refusal({ text: 'a'.repeat(50_001) })).toMatchObject(
      invalid('text must be at most 50000 characters (got 50001); upload longer texts as a file and send text_file_id'),
    );
  });

  it('text_file_id: no file of this account', async () => {
    expect(await refusal({ text: undefined, text_file_id: 999 })).toMatchObject(notFound(999));
  });

  it("text_file_id: another account's file is answered like an unknown one", async () => {
    const other = accountOf(emu, 'async-other-key');
    const id = await upload(Buffer.from('Hello.'), 'txt', 't2a_async_input', other);
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(notFound(id));
  });

  it('text_file_id: a retrieval upload', async () => {
    const id = await upload(Buffer.from('Hello.'), 'txt', 'retrieval');
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id} was uploaded with purpose retrieval, which synthesis and voice cloning do not accept`),
    );
  });

  it('text_file_id: uploaded with another purpose', async () => {
    const id = await upload(Buffer.from('Hello.'), 'txt', 'voice_clone');
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id} was uploaded with purpose voice_clone, not t2a_async_input`),
    );
  });

  it('zip: not readable as a zip', async () => {
    const id = await upload(Buffer.from('PK but not really a zip archive at all'), 'zip');
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id}: the zip cannot be read (no end of central directory record (not a zip archive, or cut short))`),
    );
  });

  it('zip: no file in it', async () => {
    const id = await uploadZip({});
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(invalid(`text_file_id ${id}: the zip holds no file`));
  });

  it('zip: more than 1000 files', async () => {
    const id = await uploadZip(tooMany('txt'));
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id}: the zip holds 1001 files, over the emulator's limit of 1000 files per task`),
    );
  });

  it('zip: files of two types', async () => {
    const id = await uploadZip({ 'a.txt': 'Hi.', 'b.json': '{"content":"Hi."}' });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id}: the zip must hold files of one type, all .txt or all .json`),
    );
  });

  it('zip: an entry whose name leaves its folder', async () => {
    const id = await uploadZip({ '../escaped.txt': 'Hi.' });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id}: the zip entry name "../escaped.txt" leaves its folder ("..")`),
    );
  });

  it('zip: a .json entry that is not JSON', async () => {
    const id = await uploadZip({ 'a.json': '{oops' });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(invalid(`text_file_id ${id}: a.json is not valid JSON`));
  });

  it('zip: a .json entry without a non-empty title, content or extra', async () => {
    const id = await uploadZip({ 'a.json': '{"title":"  ","other":"Hi."}' });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid(`text_file_id ${id}: a.json has no non-empty title, content or extra string`),
    );
  });

  it("text_file_id: the file's text at 1,000,000 characters or more", async () => {
    const id = await upload(Buffer.from('a'.repeat(1_000_000)), 'txt');
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid("text_file_id: the file's text must be under 1000000 characters (got 1000000)"),
    );
  });

  it('order: both inputs named before the length of the text', async () => {
    expect(await refusal({ text: 'a'.repeat(50_001), text_file_id: 999 })).toMatchObject(invalid('give either text or text_file_id, not both'));
  });

  it("order: the zip's file count before the types of its files", async () => {
    const id = await uploadZip(tooMany('json'));
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject({ message: expect.stringMatching(/holds 1001 files/) });
  });
});

describe('createTask: the rules of each text, the task and the account, in order', () => {
  it('T2A rules: a text refused as /v1/t2a_v2 would refuse it', async () => {
    expect(await refusal({ text: '?!' })).toMatchObject(invalid('text must contain at least one letter or digit to pronounce'));
  });

  it('T2A rules: a refusal inside a zip names the file and its field', async () => {
    const id = await uploadZip({ 'chapters/one.json': '{"title":"Chapter one.","content":"?!"}' });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid('text_file_id chapters/one content: text must contain at least one letter or digit to pronounce'),
    );
  });

  it('T2A rules: a code other than 2013 is passed on as it is', async () => {
    expect(await refusal({ voice_setting: { voice_id: 'nobody-voice' } })).toMatchObject({
      code: 2054,
      message: 'voice id not exist: voice_setting.voice_id nobody-voice',
    });
  });

  it('voice_modify: a format other than mp3, wav and flac', async () => {
    expect(await refusal({ audio_setting: { format: 'pcm' }, voice_modify: { pitch: 10 } })).toMatchObject(
      invalid('voice_modify applies only to mp3, wav and flac; audio_setting.format pcm does not take it'),
    );
  });

  it("task size: the texts' audio over 3 h in all", async () => {
    const id = await uploadZip({ 'a.txt': PAUSED(60), 'b.txt': PAUSED(60) });
    expect(await refusal({ text: undefined, text_file_id: id })).toMatchObject(
      invalid("text_file_id: the task's audio would last 12018 s in all, over the emulator's limit of 10800 s per task"),
    );
  });

  it("task size: the task's audio over 1024 MB", async () => {
    expect(await refusal({ text: PAUSED(70), audio_setting: { format: 'wav', audio_sample_rate: 44100, channel: 2 } })).toMatchObject(
      invalid(
        "audio_setting: the task's audio would be about 1179 MB, over the emulator's limit of 1024 MB per task; ask for a compressed format or a lower sample rate",
      ),
    );
  });

  it('balance: used up (1008)', async () => {
    const poor = emu.accounts.put('async-poor', { balance_micro: 0 });
    expect(await refusal({}, poor)).toMatchObject({ code: 1008, message: 'insufficient balance' });
  });

  it('requests_per_minute: the window full (1002)', async () => {
    const limited = emu.accounts.put('async-rpm', { limits: { requests_per_minute: 1 } });
    emu.clock.freeze(true);
    try {
      await create({}, limited);
      expect(await refusal({}, limited)).toMatchObject({ code: 1002, message: 'rate limit exceeded(RPM)' });
      emu.clock.advance(60_000);
      await expect(create({}, limited)).resolves.toMatchObject({ state: 'running' });
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('characters_per_minute: the characters over the window (1039)', async () => {
    const limited = emu.accounts.put('async-cpm', { limits: { characters_per_minute: 5 } });
    expect(await refusal({}, limited)).toMatchObject({ code: 1039, message: 'token limit' });
  });

  it('order: the T2A rules before voice_modify', async () => {
    expect(await refusal({ text: '?!', audio_setting: { format: 'pcm' }, voice_modify: { pitch: 10 } })).toMatchObject({
      message: 'invalid params, text must contain at least one letter or digit to pronounce',
    });
  });

  it('order: voice_modify before the task size', async () => {
    expect(
      await refusal({ text: PAUSED(70), audio_setting: { format: 'pcm', audio_sample_rate: 44100, channel: 2 }, voice_modify: { pitch: 10 } }),
    ).toMatchObject(invalid('voice_modify applies only to mp3, wav and flac; audio_setting.format pcm does not take it'));
  });

  it('order: the task size before the balance', async () => {
    const poor = emu.accounts.put('async-poor-size', { balance_micro: 0 });
    const id = await upload(zipOf({ 'a.txt': PAUSED(60), 'b.txt': PAUSED(60) }), 'zip', 't2a_async_input', poor);
    expect(await refusal({ text: undefined, text_file_id: id }, poor)).toMatchObject({ code: 2013 });
  });

  it('order: an Opus rate async does not take still hears every other rule first', async () => {
    expect(await refusal({ voice_setting: { voice_id: 'nobody-voice' }, audio_setting: { format: 'opus', audio_sample_rate: 22050 } })).toMatchObject({
      code: 2054,
    });
  });
});

describe('createTask: an accepted task', () => {
  it('is Processing, charged for every text, and its audio is made in the background', async () => {
    emu.clock.freeze(true); // the creation time read below is the task's own
    try {
      const who = emu.accounts.put('async-ok', { balance_micro: 1_000_000 });
      const id = await upload(zipOf({ 'a.json': '{"title":"Title.","content":"The content."}' }), 'zip', 't2a_async_input', who);
      const task = await create({ text: undefined, text_file_id: id }, who);
      expect(task).toMatchObject({ account_id: who.id, state: 'running', created_at_ms: emu.clock.now() });
      expect(task.ready_at_ms).toBeGreaterThan(task.created_at_ms + 1000);
      expect(who.balanceMicro).toBe(1_000_000 - task.usage_characters * 100);
      expect(statusOf(emu, task)).toBe('Processing');
      await emu.clock.settled();
      expect(task.state).toBe('done');
    } finally {
      emu.clock.freeze(false);
    }
  });

  it('an Opus rate async does not take: accepted, and Failed with the reason', async () => {
    const task = await create({ audio_setting: { format: 'opus', audio_sample_rate: 22050 } });
    expect(task).toMatchObject({ state: 'failed', note: 'audio_sample_rate 22050 is not supported for opus (use 8000, 12000, 16000, 24000, 48000)' });
    expect(statusOf(emu, task)).toBe('Failed');
  });

  it('a synthesis cut by a fault: accepted, and Failed', async () => {
    const task = await create({}, account, { fail: true });
    expect(task).toMatchObject({ state: 'failed', note: 'synthesis cut by a fault' });
  });
});
