import type { Emulator, StateArea } from '../../../core/emulator.js';

/**
 * Custom voices of every account: plain records kept in one state area of the emulator instance.
 * The speech service reads them too (an account's platform voices count as its cloned voices).
 */
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

export const VOICES_AREA = 'platform-voices';
export const MAX_CUSTOM_VOICES = 5;

export interface VoiceArea extends StateArea {
  byAccount: Map<string, Map<string, CustomVoice>>;
}

function createArea(emu: Emulator): VoiceArea {
  const byAccount = new Map<string, Map<string, CustomVoice>>();
  const dropBlobs = (rel: string) => void emu.blobs.removeTree(rel).catch(() => undefined);
  return {
    name: VOICES_AREA,
    byAccount,
    reset(accountId) {
      if (accountId === undefined) {
        byAccount.clear();
        dropBlobs('voices');
      } else {
        byAccount.delete(accountId);
        dropBlobs(`voices/${accountId}`);
      }
    },
    view(accountId) {
      return [...(byAccount.get(accountId)?.values() ?? [])]
        .sort((a, b) => (a.voiceId < b.voiceId ? -1 : 1))
        .map((v) => ({ voice_id: v.voiceId, created_at: v.createdAt, ref_text: v.refText, ref_format: v.refFormat, ref_duration_ms: v.refDurationMs }));
    },
    save() {
      return [...byAccount.values()].flatMap((m) => [...m.values()]);
    },
    load(data) {
      byAccount.clear();
      for (const v of (Array.isArray(data) ? data : []) as CustomVoice[]) accountVoices(byAccount, v.accountId).set(v.voiceId, v);
    },
  };
}

function accountVoices(map: Map<string, Map<string, CustomVoice>>, accountId: string): Map<string, CustomVoice> {
  let m = map.get(accountId);
  if (!m) {
    m = new Map();
    map.set(accountId, m);
  }
  return m;
}

/** The voices area of an emulator, registered on first use (routes register it at start-up). */
export function voiceArea(emu: Emulator): VoiceArea {
  const existing = emu.areas.get(VOICES_AREA) as VoiceArea | undefined;
  if (existing) return existing;
  const area = createArea(emu);
  emu.registerArea(area);
  return area;
}

export function voicesOf(emu: Emulator, accountId: string): Map<string, CustomVoice> {
  return accountVoices(voiceArea(emu).byAccount, accountId);
}

/** One custom voice of an account, or undefined. */
export function findCustomVoice(emu: Emulator, accountId: string, voiceId: string): CustomVoice | undefined {
  return voiceArea(emu).byAccount.get(accountId)?.get(voiceId);
}

/** Every custom voice of an account, in the list order (voice_id, code-point order). */
export function listCustomVoices(emu: Emulator, accountId: string): CustomVoice[] {
  return [...(voiceArea(emu).byAccount.get(accountId)?.values() ?? [])].sort((a, b) => (a.voiceId < b.voiceId ? -1 : a.voiceId > b.voiceId ? 1 : 0));
}
