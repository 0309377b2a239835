import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { toneOfSample } from '../../shared/sample-tone.js';
import { PlatformError } from '../envelope.js';
import { firstIssue } from '../tts/schema.js';
import { loadReference } from './reference.js';
import { VOICE_ID, voiceSaveSchema, type VoiceListData } from './schema.js';
import { findCustomVoice, listCustomVoices, MAX_CUSTOM_VOICES, voicesOf, type CustomVoice } from './store.js';

/**
 * Voice cloning rules: save (create or overwrite), list (cursor paging), delete (idempotent).
 * Nothing of HTTP here: callers pass an authenticated account; failures throw PlatformError
 * whose codes are those of the spec's voice table.
 */
export { findCustomVoice, listCustomVoices, voiceArea, type CustomVoice } from './store.js';
export { voiceSaveSchema, voiceListQuerySchema, voiceDeleteParamsSchema } from './schema.js';

export const MAX_REF_TEXT = 500;
export const MAX_PAGE_SIZE = 20;
/** Validity of a `voice_url` link, on the emulator clock. */
export const VOICE_URL_TTL_MS = 24 * 3600 * 1000;

const param = (message: string) => new PlatformError('param', message);

/** True when `voiceId` is a preset of either catalogue (compared without case: the names are taken). */
export function isSystemVoice(emu: Emulator, voiceId: string): boolean {
  const id = voiceId.toLowerCase();
  return [...emu.fixtures.data['platform-voices.json'], ...emu.fixtures.data['speech-voices.json']].some((v) => v.voice_id.toLowerCase() === id);
}

export async function saveVoice(emu: Emulator, account: Account, body: unknown): Promise<Record<string, never>> {
  const parsed = voiceSaveSchema.safeParse(body ?? undefined);
  if (!parsed.success) throw param(firstIssue(parsed.error));
  const { voice_id: voiceId, ref_audio: refAudio, ref_text: refText } = parsed.data;

  if (!VOICE_ID.test(voiceId)) throw param(`voice_id: "${voiceId}" must be 1 to 64 lowercase letters, digits, - or _`);
  if (!refAudio && !refText) throw param('ref_audio and ref_text: both are required to clone a voice');
  if (!refAudio || !refText) throw param(`ref_audio and ref_text must be given together (${refAudio ? 'ref_text' : 'ref_audio'} is missing)`);
  const textLength = [...refText].length;
  if (textLength > MAX_REF_TEXT) throw param(`ref_text: ${textLength} characters, more than ${MAX_REF_TEXT}`);
  if (isSystemVoice(emu, voiceId)) throw new PlatformError(10018, `voice_id: "${voiceId}" is the name of a system preset voice`);

  const voices = voicesOf(emu, account.id);
  const full = () => !voices.has(voiceId) && voices.size >= MAX_CUSTOM_VOICES;
  if (full()) throw new PlatformError(10017, `custom voice limit reached: this account already has ${MAX_CUSTOM_VOICES} custom voices`);
  if (!emu.accounts.canAfford(account, 0)) throw new PlatformError('balance', 'insufficient balance: the free quota is used up');

  const ref = await loadReference(emu, account, refAudio);
  // Checked again: another save of this account may have finished while the audio was fetched.
  if (full()) throw new PlatformError(10017, `custom voice limit reached: this account already has ${MAX_CUSTOM_VOICES} custom voices`);

  const refBlob = `voices/${account.id}/${emu.ids.stream(account.id).hex(12)}-${voiceId}.${ref.probe.format}`;
  await emu.blobs.put(refBlob, ref.bytes);
  const previous = voices.get(voiceId);
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
  voices.set(voiceId, voice);
  if (previous && previous.refBlob !== refBlob) await emu.blobs.remove(previous.refBlob).catch(() => undefined);
  emu.markDirty();
  return {};
}

/** One page of the account's voices in voice_id order, starting at the cursor `voice_id` (inclusive). */
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
  const hasMore = all.length > size;
  const expires = emu.clock.now() + VOICE_URL_TTL_MS;
  return {
    list: page.map((v) => ({ voice_id: v.voiceId, voice_url: emu.downloadUrl('platform', v.refBlob, expires), created_at: v.createdAt })),
    total: page.length,
    next_voice_id: hasMore ? all[size]!.voiceId : '',
    has_more: hasMore,
  };
}

/** Removes a custom voice; succeeds whether or not it existed. A system voice is never touched. */
export async function deleteVoice(emu: Emulator, account: Account, voiceId: string): Promise<Record<string, never>> {
  const voice = findCustomVoice(emu, account.id, voiceId);
  if (voice) {
    voicesOf(emu, account.id).delete(voiceId);
    await emu.blobs.remove(voice.refBlob).catch(() => undefined);
    emu.markDirty();
  }
  return {};
}
