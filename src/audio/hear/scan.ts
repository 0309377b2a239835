/**
 * The emulator's signatures anywhere in a recording: the signature search of `marker.ts` run over
 * consecutive 1.2 s stretches, so utterances that follow each other (with or without silence between
 * them, after resampling or lossy coding) are each found where they start.
 */
import { locateSignature, signatureFrames } from '../marker.js';

export interface FoundSignature {
  id: string;
  /** Where the synthesis starts in the recording (its signature's 30 ms lead included), ms. */
  startMs: number;
}

const WINDOW_S = 1.2;

export function findSignatures(samples: Float32Array, sampleRate: number): FoundSignature[] {
  const found: FoundSignature[] = [];
  const step = Math.round(WINDOW_S * sampleRate);
  for (let from = 0; from < samples.length;) {
    const hit = locateSignature(samples, sampleRate, from);
    if (!hit) {
      from += step;
      continue;
    }
    found.push({ id: hit.id, startMs: (hit.start * 1000) / sampleRate });
    from = hit.start + signatureFrames(sampleRate);
  }
  return found;
}
