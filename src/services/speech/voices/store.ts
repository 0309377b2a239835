/**
 * Voices made on the speech service: cloned (`/v1/voice_clone`) and designed (`/v1/voice_design`).
 * Ids are global (a second account cannot take one: 2039; using another's: 2042). A voice not used in a
 * synthesis within 7 days on the emulator clock is deleted; once used it is kept and listed.
 * `POST /v1/delete_voice` leaves a tombstone (the record with `deleted_at_ms`) until reset: the id is
 * never free again, and sockets started before the deletion keep speaking with it.
 */
import * as z from 'zod';
import { areaOf, checkWith, recordArea, type RecordArea } from '../../../core/state/areas.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { SpeechError } from '../errors.js';

export type VoiceKind = 'clone' | 'design';

export interface SpeechVoice {
  voice_id: string;
  account_id: string;
  kind: VoiceKind;
  /** Tone of the audio engine. */
  tone_id: string;
  created_at_ms: number;
  /** Deleted at this time unless used before. */
  expires_at_ms: number;
  used: boolean;
  /** Set by `delete_voice`: the record stays as a tombstone. */
  deleted_at_ms?: number;
}

export const UNUSED_VOICE_TTL_MS = 7 * 24 * 3600 * 1000;
const AREA = 'speech-custom-voices';

type VoiceArea = RecordArea<string, SpeechVoice>;

export function voiceStore(emu: Emulator): VoiceArea {
  return areaOf(emu, AREA, () =>
    recordArea<string, SpeechVoice>({
      name: AREA,
      idOf: (v) => v.voice_id,
      accountOf: (v) => v.account_id,
      record: checkWith(
        z.looseObject({
          voice_id: z.string().min(1),
          account_id: z.string().min(1),
          kind: z.enum(['clone', 'design']),
          tone_id: z.string(),
          created_at_ms: z.number(),
          expires_at_ms: z.number(),
          used: z.boolean(),
          deleted_at_ms: z.number().optional(),
        }),
      ),
      listed: (byId) => {
        sweep(emu);
        return byId.values();
      },
      show: (v) => ({
        voice_id: v.voice_id,
        kind: v.kind,
        used: v.used,
        created_at_ms: v.created_at_ms,
        expires_at_ms: v.used || v.deleted_at_ms !== undefined ? null : v.expires_at_ms,
        ...(v.deleted_at_ms !== undefined ? { deleted_at_ms: v.deleted_at_ms } : {}),
      }),
    }),
  );
}

/** Forgets voices whose 7 unused days are over. */
function sweep(emu: Emulator): void {
  const now = emu.clock.now();
  const { byId } = voiceStore(emu);
  for (const [id, v] of byId) {
    if (!v.used && v.deleted_at_ms === undefined && now >= v.expires_at_ms) {
      byId.delete(id);
      emu.markDirty(AREA, v.account_id, id);
    }
  }
}

/** A live cloned or designed voice (a deleted one is not found). */
export function findSpeechVoice(emu: Emulator, voiceId: string): SpeechVoice | undefined {
  const v = voiceRecord(emu, voiceId);
  return v && v.deleted_at_ms === undefined ? v : undefined;
}

/** The record of an id, a tombstone included (an id in it is taken). */
export function voiceRecord(emu: Emulator, voiceId: string): SpeechVoice | undefined {
  sweep(emu);
  return voiceStore(emu).byId.get(voiceId);
}

/** Forgets a voice just added whose preview was refused: no voice is left behind. */
export function dropNewSpeechVoice(emu: Emulator, account: Account, voiceId: string): void {
  voiceStore(emu).byId.delete(voiceId);
  emu.markDirty(AREA, account.id, voiceId);
}

/** Deletes a voice: it leaves the lists and synthesis, and its id stays taken until reset. */
export function deleteSpeechVoice(emu: Emulator, voice: SpeechVoice): void {
  voice.deleted_at_ms = emu.clock.now();
  emu.markDirty(AREA, voice.account_id, voice.voice_id);
}

export function addSpeechVoice(emu: Emulator, account: Account, voiceId: string, kind: VoiceKind, toneId: string): SpeechVoice {
  const now = emu.clock.now();
  const voice: SpeechVoice = {
    voice_id: voiceId,
    account_id: account.id,
    kind,
    tone_id: toneId,
    created_at_ms: now,
    expires_at_ms: now + UNUSED_VOICE_TTL_MS,
    used: false,
  };
  voiceStore(emu).byId.set(voiceId, voice);
  emu.markDirty(AREA, account.id, voiceId);
  return voice;
}

/**
 * The tone of a cloned or designed voice for a synthesis by `account`: undefined when no such voice
 * exists (the caller answers 2054), 2042 when it belongs to another account. `asOfMs`: the synthesis
 * belongs to a session that started then, so a voice deleted since still speaks in it.
 */
export function speechVoiceTone(emu: Emulator, account: Account, voiceId: string, asOfMs?: number): string | undefined {
  const record = voiceRecord(emu, voiceId);
  const keptBySession = record?.deleted_at_ms !== undefined && asOfMs !== undefined && record.deleted_at_ms >= asOfMs;
  const v = record && (record.deleted_at_ms === undefined || keptBySession) ? record : undefined;
  if (!v) return undefined;
  if (v.account_id !== account.id) throw new SpeechError(2042, `You don't have access to this voice_id: ${voiceId}`);
  return v.tone_id;
}

/**
 * After a successful synthesis: its cloned and designed voices become kept and listed. Planning already
 * refused another account's voice (2042), so the ids are the synthesizing account's. Answers how many
 * voices this synthesis used for the first time (`usage_voice_count`, rule E10).
 */
export function markVoicesUsed(emu: Emulator, voiceIds: readonly string[]): number {
  const { byId } = voiceStore(emu);
  let first = 0;
  for (const id of voiceIds) {
    const v = byId.get(id);
    if (v && !v.used) {
      v.used = true;
      first++;
      emu.markDirty(AREA, v.account_id, id);
    }
  }
  return first;
}

/** The account's voices of a kind that were used in a synthesis, in creation order. */
export function usedVoices(emu: Emulator, account: Account, kind: VoiceKind): SpeechVoice[] {
  sweep(emu);
  return [...voiceStore(emu).byId.values()]
    .filter((v) => v.account_id === account.id && v.kind === kind && v.used && v.deleted_at_ms === undefined)
    .sort((a, b) => a.created_at_ms - b.created_at_ms || (a.voice_id < b.voice_id ? -1 : 1));
}
