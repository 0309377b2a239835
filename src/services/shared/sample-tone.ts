import { sha256Hex } from '../../core/state/ids.js';

/**
 * The audio engine's tone of a voice cloned from a recording: it follows the recording's bytes, so the
 * same sample always gives the same voice, on the platform and on the speech service alike.
 */
export function toneOfSample(bytes: Buffer): string {
  return `clone-${sha256Hex(bytes).slice(0, 16)}`;
}
