// Platform models called directly (no HTTP): voice save, conversation open and call start, one test per
// check in the order each model runs them.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { putCustomVoice } from '../../src/services/shared/custom-voices.js';
import { startCall } from '../../src/services/platform/calls/model.js';
import { openConversation } from '../../src/services/platform/conversation/model.js';
import { createSession } from '../../src/services/platform/sessions/model.js';
import { MAX_CUSTOM_VOICES, MAX_REF_TEXT, saveVoice } from '../../src/services/platform/voices/model.js';
import { accountOf, modelEmulator, rejected, thrown } from './model-emulator.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});

describe('saveVoice: the checks in order', () => {
  const save = (key: string, body: Record<string, unknown>) =>
    rejected(saveVoice(emu, accountOf(emu, key), { voice_id: 'my_voice', ref_audio: 'https://cdn.emulator.test/a.wav', ref_text: 'Hello.', ...body } as never));

  it('voice_id: outside its pattern', async () => {
    expect(await save('v1', { voice_id: 'My Voice' })).toMatchObject({
      codeOrKind: 'param',
      message: 'voice_id: "My Voice" must be 1 to 64 lowercase letters, digits, - or _',
    });
  });

  it('ref_audio and ref_text: both missing', async () => {
    expect(await save('v1', { ref_audio: undefined, ref_text: undefined })).toMatchObject({
      codeOrKind: 'param',
      message: 'ref_audio and ref_text: both are required to clone a voice',
    });
  });

  it('ref_audio and ref_text: one without the other', async () => {
    expect(await save('v1', { ref_text: undefined })).toMatchObject({ message: 'ref_audio and ref_text must be given together (ref_text is missing)' });
  });

  it('ref_text: longer than MAX_REF_TEXT characters', async () => {
    expect(await save('v1', { ref_text: 'a'.repeat(MAX_REF_TEXT + 1) })).toMatchObject({
      message: `ref_text: ${MAX_REF_TEXT + 1} characters, more than ${MAX_REF_TEXT}`,
    });
  });

  it('voice_id: the name of a system voice (10018)', async () => {
    expect(await save('v1', { voice_id: 'female_warm' })).toMatchObject({ codeOrKind: 10018 });
  });

  it('custom voices: MAX_CUSTOM_VOICES already (10017)', async () => {
    const account = accountOf(emu, 'v-full');
    for (let i = 0; i < MAX_CUSTOM_VOICES; i++) {
      putCustomVoice(emu, {
        voiceId: `v${i}`,
        accountId: account.id,
        toneId: 't',
        refBlob: `b${i}`,
        refFormat: 'wav',
        refDurationMs: 1,
        refText: 'x',
        createdAt: 0,
      });
    }
    expect(await save('v-full', {})).toMatchObject({ codeOrKind: 10017 });
  });

  it('balance: used up', async () => {
    emu.accounts.put('v-poor', { balance_micro: 0 });
    expect(await save('v-poor', {})).toMatchObject({ codeOrKind: 'balance', message: 'insufficient balance: the free quota is used up' });
  });

  it('ref_audio: an address that is not http(s) (10001, before anything is fetched)', async () => {
    expect(await save('v1', { ref_audio: 'ftp://example.com/a.wav' })).toMatchObject({ codeOrKind: 'param' });
  });
});

describe('openConversation: the checks in order', () => {
  const open = (key: string, meta: Record<string, unknown>, mode: 'stream' | 'text' = 'stream') =>
    openConversation(emu, accountOf(emu, key), mode, { voice_id: 'default', ...meta } as never, 'meta.');

  it('voice_id: not a role', () => {
    expect(thrown(() => open('c1', { voice_id: 'nobody' }))).toMatchObject({
      code: '20003',
      message: expect.stringMatching(/^meta\.voice_id: unknown role "nobody" \(roles: default, /),
    });
  });

  it('balance: used up (40011)', () => {
    emu.accounts.put('c-poor', { balance_micro: 0 });
    expect(thrown(() => open('c-poor', {}))).toMatchObject({ code: '40011', message: 'insufficient balance: the conversation cannot start' });
  });

  it('session_id (/stream): no REST session of this key', () => {
    expect(thrown(() => open('c1', { session_id: 'missing' }))).toMatchObject({
      code: '20003',
      message: expect.stringMatching(/^meta\.session_id: no session "missing" for this API key/),
    });
  });

  it('session_id is read by /stream only; stream-text opens a session of its own', () => {
    const opened = open('c1', { session_id: 'missing' }, 'text');
    expect(opened.session).toMatchObject({ created_here: true, voice_id: 'default' });
  });

  it('a REST session of the key is taken; the language is the meta one, else the role one', () => {
    const account = accountOf(emu, 'c1');
    const rest = createSession(emu, account, 'default');
    const opened = open('c1', { session_id: rest.sessionId, language: 'en' });
    expect(opened.session).toMatchObject({ session_id: rest.sessionId, created_here: false, language: 'en' });
    expect(open('c1', {}).language).toBe(opened.role.language);
  });
});

describe('startCall: the checks in order', () => {
  const start = (key: string, body: Record<string, unknown> = {}) => startCall(emu, accountOf(emu, key), { client_nonce: randomUUID(), ...body } as never);

  it('timbre: not a role', async () => {
    expect(await rejected(start('k1', { timbre: 'nobody' }))).toMatchObject({
      codeOrKind: 'param',
      message: expect.stringMatching(/^timbre: unknown role "nobody"/),
    });
  });

  it('client_nonce: the same nonce within the window answers the same session', async () => {
    const nonce = randomUUID();
    const first = await start('k-nonce', { client_nonce: nonce });
    expect((await start('k-nonce', { client_nonce: nonce.toUpperCase() })).session_id).toBe(first.session_id);
  });

  it('previous_session_id: no earlier session of this key', async () => {
    expect(await rejected(start('k1', { previous_session_id: 'gone' }))).toMatchObject({
      codeOrKind: 'param',
      message: 'previous_session_id: no earlier session "gone" of this API key',
    });
  });

  it('balance: less than one second of call', async () => {
    emu.accounts.put('k-poor', { balance_micro: 0, free_call_seconds: 0 });
    expect(await rejected(start('k-poor'))).toMatchObject({
      codeOrKind: 'balance',
      message: expect.stringMatching(/^insufficient balance: a call needs at least 1 second/),
    });
  });

  it('single_channel: a call in progress (40012)', async () => {
    emu.accounts.put('k-single', { limits: { single_channel: true } });
    const first = await start('k-single');
    expect(await rejected(start('k-single'))).toMatchObject({
      codeOrKind: 40012,
      message: `a call is in progress (session ${first.session_id}); end it first`,
    });
  });

  it('max_concurrent_calls: the limit reached (40013)', async () => {
    emu.accounts.put('k-two', { limits: { max_concurrent_calls: 2 } });
    await start('k-two');
    await start('k-two');
    expect(await rejected(start('k-two'))).toMatchObject({ codeOrKind: 40013, message: 'concurrency limit reached: 2 of 2 concurrent calls in progress' });
  });

  it('a call that passes every check gets its room', async () => {
    const data = await start('k-ok');
    expect(data).toMatchObject({
      room_name: expect.stringMatching(/^room_[0-9a-f]{16}$/),
      identity: expect.stringMatching(/^user_/),
      token: expect.any(String),
    });
  });
});
