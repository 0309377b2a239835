/**
 * `get_voice`: only the keys `voice_type` asks for, each an array. System voices come from the speech
 * voice fixture; cloned and designed voices of the account once used in a synthesis (rule 12.8).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { usedVoices, type VoiceKind } from './store.js';
import { systemVoices } from './system.js';

const LANGUAGES: Record<string, string> = { zh: 'Mandarin Chinese', en: 'English', ja: 'Japanese', ko: 'Korean', yue: 'Cantonese' };

/** `A female Korean voice.`, `An English voice.`: for an entry the fixture gives no sentence. */
function defaultDescription(gender: string | undefined, language: string): string {
  const words = `${!gender || gender === 'neutral' ? '' : `${gender} `}${language} voice.`;
  return `${/^[aeiou]/i.test(words) ? 'An' : 'A'} ${words}`;
}

/** Every fixture entry in file order; `language` stays in the fixture (get_voice has no such field). */
function listSystemVoices(emu: Emulator) {
  return systemVoices(emu).map((v) => ({
    voice_id: v.voice_id,
    voice_name: v.voice_name,
    description: [v.description ?? defaultDescription(v.gender, LANGUAGES[v.language] ?? v.language)],
    created_time: '1970-01-01',
  }));
}

/** `yyyy-mm-dd` (UTC) of a time on the emulator clock. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function made(emu: Emulator, account: Account, kind: VoiceKind) {
  return usedVoices(emu, account, kind).map((v) => ({ voice_id: v.voice_id, description: [] as string[], created_time: dayOf(v.created_at_ms) }));
}

export function listVoices(emu: Emulator, account: Account, voiceType: 'system' | 'voice_cloning' | 'voice_generation' | 'all') {
  const out: Record<string, unknown[]> = {};
  if (voiceType === 'system' || voiceType === 'all') out.system_voice = listSystemVoices(emu);
  if (voiceType === 'voice_cloning' || voiceType === 'all') out.voice_cloning = made(emu, account, 'clone');
  if (voiceType === 'voice_generation' || voiceType === 'all') out.voice_generation = made(emu, account, 'design');
  return out;
}
