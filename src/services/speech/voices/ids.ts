import type { Emulator } from '../../../core/emulator.js';
import { invalidParams, SpeechError } from '../errors.js';
import { voiceRecord } from './store.js';
import { findSystemVoice } from './system.js';

/**
 * The documented rules of a caller-chosen voice id (cloning, and a custom id in voice design):
 * 8–256 characters, an ASCII letter first, only letters, digits, `-` and `_`, not ending in `-` or `_`,
 * and not an existing id (a system voice or any account's voice: 2039).
 */
export function checkNewVoiceId(emu: Emulator, voiceId: string, field = 'voice_id'): void {
  const n = voiceId.length;
  if (n < 8 || n > 256) throw invalidParams(`${field} must be 8 to 256 characters (got ${n})`);
  if (!/^[A-Za-z]/.test(voiceId)) throw invalidParams(`${field} must start with an ASCII letter`);
  if (!/^[A-Za-z0-9_-]+$/.test(voiceId)) throw invalidParams(`${field} may hold only letters, digits, - and _`);
  if (/[-_]$/.test(voiceId)) throw invalidParams(`${field} must not end with - or _`);
}

/**
 * 2039 when the id is taken (checked after the account's permission, like the real service): a system
 * voice, any account's voice, or a deleted voice's id (E11: never used again until reset).
 */
export function checkVoiceIdFree(emu: Emulator, voiceId: string): void {
  if (findSystemVoice(emu, voiceId) || voiceRecord(emu, voiceId)) throw new SpeechError(2039, `voice clone voice id duplicate: ${voiceId}`);
}
