/**
 * The price of recognised audio on the platform (its HTTP recognition and its WebSocket areas). The recognizer itself
 * is the one both services share (`services/shared/recognize.ts`: silence, then the emulator's own signature, then
 * the recognition fixture).
 */
import type { Emulator } from '../../../core/emulator.js';

/** Micro-units for `seconds` of recognised audio (billing fixture). */
export function recognitionPrice(emu: Emulator, seconds: number): number {
  return Math.round(emu.fixtures.data['billing.json'].prices_micro.recognition_audio_second * seconds);
}
