/**
 * Voice cloning rules: save (create or overwrite), list (cursor paging), delete (idempotent).
 * Nothing of HTTP here: callers pass an authenticated account and a body the route's schema has
 * typed; failures throw PlatformError whose codes are those of the spec's voice table (10001
 * parameters, 10017 too many voices, 10018 a system voice's name, 20003 balance, 20012 reference
 * audio). The voices themselves are kept in `services/shared/custom-voices.ts` (the speech service
 * reads them too).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { customVoiceCount, findCustomVoice, listCustomVoices, putCustomVoice, removeCustomVoice, type CustomVoice } from '../../shared/custom-voices.js';
import { toneOfSample } from '../../shared/sample-tone.js';
import { PlatformError } from '../envelope.js';
import { loadReference } from './reference.js';
import { VOICE_ID, type VoiceListData, type VoiceSaveRequest } from './schema.js';

export { voiceSaveSchema, voiceDeleteParamsSchema } from './schema.js';

export const MAX_CUSTOM_VOICES = 5;
export const MAX_REF_TEXT = 500;
export const MAX_PAGE_SIZE = 20;
/** Validity of a `voice_url` link, on the emulator clock. */
export const VOICE_URL_TTL_MS = 24 * 3600 * 1000;

const param = (message: string) => new PlatformError('param', message);
/** 10017: the account already has MAX_CUSTOM_VOICES voices. */
const tooManyVoices = () => new PlatformError(10017, `custom voice limit reached: this account already has ${MAX_CUSTOM_VOICES} custom voices`);
/** 10018: the name of a preset voice of either catalogue. */
const systemVoiceName = (voiceId: string) => new PlatformError(10018, `voice_id: "${voiceId}" is the name of a system preset voice`);

/** True when `voiceId` is a preset of either catalogue (compared without case: the names are taken). */
export function isSystemVoice(emu: Emulator, voiceId: string): boolean {
  const id = voiceId.toLowerCase();
  return [...emu.fixtures.data['platform-voices.json'], ...emu.fixtures.data['speech-voices.json']].some((v) => v.voice_id.toLowerCase() === id);
}

/**
 * Save, in order: voice_id pattern, ref_audio and ref_text together, ref_text length (10001); a
 * system voice's name (10018); the five-voice limit (10017); the balance (20003); the reference
 * audio (`reference.ts`: 10001 / 20012); the limit again, checked and written as one step (parallel saves).
 */
export async function saveVoice(emu: Emulator, account: Account, body: VoiceSaveRequest): Promise<Record<string, never>> {
  const { voice_id: voiceId, ref_audio: refAudio, ref_text: refText } = body;

  if (!VOICE_ID.test(voiceId)) throw param(`voice_id: "${voiceId}" must be 1 to 64 lowercase letters, digits, - or _`);
  if (!refAudio && !refText) throw param('ref_audio and ref_text: both are required to clone a voice');
  if (!refAudio || !refText) throw param(`ref_audio and ref_text must be given together (${refAudio ? 'ref_text' : 'ref_audio'} is missing)`);
  const textLength = [...refText].length;
  if (textLength > MAX_REF_TEXT) throw param(`ref_text: ${textLength} characters, more than ${MAX_REF_TEXT}`);
  if (isSystemVoice(emu, voiceId)) throw systemVoiceName(voiceId);

  const full = () => !findCustomVoice(emu, account.id, voiceId) && customVoiceCount(emu, account.id) >= MAX_CUSTOM_VOICES;
  if (full()) throw tooManyVoices();
  if (!emu.accounts.canAfford(account, 0)) throw new PlatformError('balance', 'insufficient balance: the free quota is used up');

  const ref = await loadReference(emu, account, refAudio);
  const refBlob = `voices/${account.id}/${emu.ids.stream(account.id).hex(12)}-${voiceId}.${ref.probe.format}`;
  await emu.blobs.put(refBlob, ref.bytes);
  // The limit again, with no await between this check and the write below: parallel saves of one account
  // each passed the first check while their audio was fetched and stored, and only the first five may land.
  if (full()) {
    await emu.blobs.remove(refBlob).catch(() => undefined);
    throw tooManyVoices();
  }
  const voice: CustomVoice = {
    voiceId,
    accountId: account.id,
    toneId: toneOfSample(ref.bytes),
    refBlob,
    refFormat: ref.probe.format,
    refDurationMs: ref.probe.durationMs,
    refText,
    createdAt: emu.clock.nowSec(),
  };
  const previous = putCustomVoice(emu, voice);
  if (previous && previous.refBlob !== refBlob) await emu.blobs.remove(previous.refBlob).catch(() => undefined);
  return {};
}

/** One page of the account's voices (page_size: a whole number 1 to 20, 10001 otherwise) in voice_id order, starting at the cursor `voice_id` (inclusive). */
export function listVoices(emu: Emulator, account: Account, query: { voice_id?: string; page_size?: string | number } = {}): VoiceListData {
  let size = MAX_PAGE_SIZE;
  if (query.page_size !== undefined && query.page_size !== '') {
    const raw = String(query.page_size);
    if (!/^\d+$/.test(raw.trim())) throw param(`page_size: must be a whole number from 1 to ${MAX_PAGE_SIZE}, got "${raw}"`);
    size = Number(raw);
    if (size < 1 || size > MAX_PAGE_SIZE) throw param(`page_size: must be from 1 to ${MAX_PAGE_SIZE}, got ${size}`);
  }
  const cursor = query.voice_id ?? '';
  const all = listCustomVoices(emu, account.id).filter((v) => v.voiceId >= cursor);
  const page = all.slice(0, size);
  const next = all[size];
  const expires = emu.clock.now() + VOICE_URL_TTL_MS;
  return {
    list: page.map((v) => ({ voice_id: v.voiceId, voice_url: emu.downloadUrl('platform', v.refBlob, expires), created_at: v.createdAt })),
    total: page.length,
    next_voice_id: next ? next.voiceId : '',
    has_more: next !== undefined,
  };
}

/** Removes a custom voice; succeeds whether or not it existed. A system voice is never touched. */
export async function deleteVoice(emu: Emulator, account: Account, voiceId: string): Promise<Record<string, never>> {
  const voice = removeCustomVoice(emu, account.id, voiceId);
  if (voice) await emu.blobs.remove(voice.refBlob).catch(() => undefined);
  return {};
}
