/**
 * The published system voices (fixtures/speech-voices.json, speech-current.md E21): exact lookup by
 * `voice_id` (no trimming, no case folding, so `Santa_Claus ` is not `Santa_Claus`) and the tone of
 * the audio engine each one speaks with. The fixture may be replaced at run time; each version of
 * the list gets its own index, built on first use.
 */
import type { Emulator } from '../../../core/emulator.js';
import type { Fixtures } from '../../../core/state/fixtures.js';

export type SystemVoice = Fixtures['speech-voices.json'][number];

// Keyed by the list itself: a replaced fixture is a new array, so a stale index is never read.
const indexes = new WeakMap<readonly SystemVoice[], Map<string, SystemVoice>>();

export function systemVoices(emu: Emulator): readonly SystemVoice[] {
  return emu.fixtures.data['speech-voices.json'];
}

export function findSystemVoice(emu: Emulator, voiceId: string): SystemVoice | undefined {
  const list = systemVoices(emu);
  let index = indexes.get(list);
  if (!index) {
    index = new Map(list.map((v) => [v.voice_id, v]));
    indexes.set(list, index);
  }
  return index.get(voiceId);
}

/**
 * The engine's tone of a system voice: its own id (the engine derives a stable pitch and timbre from
 * it), or for a second spelling the id it names in `same_voice_as`, so both spellings sound the same.
 */
export function systemVoiceTone(emu: Emulator, voiceId: string): string | undefined {
  const voice = findSystemVoice(emu, voiceId);
  return voice ? (voice.same_voice_as ?? voice.voice_id) : undefined;
}
