/**
 * An account's custom voices: what both services read and neither owns. The platform makes them
 * (voice cloning, `services/platform/voices/`); the speech service accepts them as voices of the same
 * account. Plain records in one state area of the emulator instance (reset, state view, snapshot);
 * the rules (names, limits, reference audio) stay with the service that makes them.
 *
 * API: `registerCustomVoices` at start-up; `findCustomVoice`, `listCustomVoices`, `customVoiceCount`
 * to read; `putCustomVoice`, `removeCustomVoice` to write (the caller has checked its rules).
 */
import * as z from 'zod';
import { accountArea, areaOf, type AccountArea } from '../../core/state/areas.js';
import type { Emulator } from '../../core/emulator.js';

export interface CustomVoice {
  voiceId: string;
  accountId: string;
  /** Tone of the audio engine: follows the reference audio, so the same recording gives the same voice. */
  toneId: string;
  /** Blob path of the stored copy of the reference audio (served by `voice_url`). */
  refBlob: string;
  refFormat: string;
  refDurationMs: number;
  refText: string;
  /** Unix seconds on the emulator clock of the last save (an overwrite re-creates the voice). */
  createdAt: number;
}

/** The area's name: also the key of its part of a saved snapshot (kept as it was). */
const AREA = 'platform-voices';

type CustomVoiceArea = AccountArea<Map<string, CustomVoice>>;

function createArea(emu: Emulator): CustomVoiceArea {
  return accountArea<Map<string, CustomVoice>, CustomVoice>({
    name: AREA,
    savedAsEntries: {
      entry: z.looseObject({
        voiceId: z.string().min(1),
        accountId: z.string().min(1),
        toneId: z.string(),
        refBlob: z.string(),
        refFormat: z.string(),
        refDurationMs: z.number(),
        refText: z.string(),
        createdAt: z.number(),
      }),
      // A voice id is unique within its account only.
      idOf: (v) => `${v.accountId}/${v.voiceId}`,
      accountOf: (v) => v.accountId,
      entriesOf: (voices) => voices.values(),
      add: (voices = new Map(), voice) => voices.set(voice.voiceId, voice),
      // The reference audio is a stored file: a start that does not find it stops, naming it.
      blobs: (v) => (v.refBlob ? [v.refBlob] : []),
    },
    show: (voices) =>
      sorted(voices).map((v) => ({
        voice_id: v.voiceId,
        created_at: v.createdAt,
        ref_text: v.refText,
        ref_format: v.refFormat,
        ref_duration_ms: v.refDurationMs,
      })),
    dropFiles: (accountId) => void emu.blobs.removeTree(accountId === undefined ? 'voices' : `voices/${accountId}`).catch(() => undefined),
  });
}

function voicesOf(byAccount: Map<string, Map<string, CustomVoice>>, accountId: string): Map<string, CustomVoice> {
  let voices = byAccount.get(accountId);
  if (!voices) {
    voices = new Map();
    byAccount.set(accountId, voices);
  }
  return voices;
}

/** In voice_id order (code points): the order of every list. */
function sorted(voices: Map<string, CustomVoice> | undefined): CustomVoice[] {
  return [...(voices?.values() ?? [])].sort((a, b) => (a.voiceId < b.voiceId ? -1 : a.voiceId > b.voiceId ? 1 : 0));
}

function area(emu: Emulator): CustomVoiceArea {
  return areaOf(emu, AREA, () => createArea(emu));
}

/** Registers the area at start-up, so a data dir snapshot restores it before the first request. */
export function registerCustomVoices(emu: Emulator): void {
  area(emu);
}

/** One custom voice of an account, or undefined (another account's voices are invisible). */
export function findCustomVoice(emu: Emulator, accountId: string, voiceId: string): CustomVoice | undefined {
  return area(emu).byAccount.get(accountId)?.get(voiceId);
}

/** Every custom voice of an account, in voice_id order (code points). */
export function listCustomVoices(emu: Emulator, accountId: string): CustomVoice[] {
  return sorted(area(emu).byAccount.get(accountId));
}

/** How many custom voices an account has. */
export function customVoiceCount(emu: Emulator, accountId: string): number {
  return area(emu).byAccount.get(accountId)?.size ?? 0;
}

/** Stores a voice (creates it or replaces the one of the same id); answers the one it replaced. */
export function putCustomVoice(emu: Emulator, voice: CustomVoice): CustomVoice | undefined {
  const voices = voicesOf(area(emu).byAccount, voice.accountId);
  const previous = voices.get(voice.voiceId);
  voices.set(voice.voiceId, voice);
  emu.markDirty(AREA, voice.accountId);
  return previous;
}

/** Removes a voice; answers it, or undefined when the account had none of that id. */
export function removeCustomVoice(emu: Emulator, accountId: string, voiceId: string): CustomVoice | undefined {
  const voices = area(emu).byAccount.get(accountId);
  const voice = voices?.get(voiceId);
  if (voice) {
    voices?.delete(voiceId);
    emu.markDirty(AREA, accountId);
  }
  return voice;
}
