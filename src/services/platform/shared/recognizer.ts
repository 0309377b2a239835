/**
 * The recognizer of the platform's HTTP recognition and its WebSocket areas (streaming recognition,
 * conversation) is the one both services share (`services/shared/recognize.ts`: silence, then the
 * emulator's own signature, then the recognition fixture); what is the platform's own is its price.
 */
import type { Emulator } from '../../../core/emulator.js';

export * from '../../shared/recognize.js';

/** Micro-units for `seconds` of recognised audio (billing fixture). */
export function recognitionPrice(emu: Emulator, seconds: number): number {
  return Math.round(emu.fixtures.data['billing.json'].prices_micro.recognition_audio_second * seconds);
}
