/**
 * The emulator's signatures anywhere in a recording: the signature search of `marker.ts` run over
 * consecutive 1.2 s stretches, so utterances that follow each other (with or without silence between
 * them, after resampling or lossy coding) are each found where they start.
 */
import { nextTurn } from '../event-loop.js';
import { locateSignature, signatureFrames } from '../marker.js';

export interface FoundSignature {
  id: string;
  /** Where the synthesis starts in the recording (its signature's 30 ms lead included), ms. */
  startMs: number;
}

const WINDOW_S = 1.2;

/** Windows searched between two turns of the event loop (about 5 s of audio, tens of ms of work). */
const WINDOWS_PER_TURN = 4;

/** Every signature in the recording, in order; yields to the event loop between slices of the search. */
export async function findSignatures(samples: Float32Array, sampleRate: number): Promise<FoundSignature[]> {
  const found: FoundSignature[] = [];
  const step = Math.round(WINDOW_S * sampleRate);
  let windows = 0;
  for (let from = 0; from < samples.length;) {
    if (++windows % WINDOWS_PER_TURN === 0) await nextTurn();
    // A silent stretch holds no signature: skipped without the search's tone sums.
    if (isSilent(samples, from, from + step + signatureFrames(sampleRate))) {
      from += step;
      continue;
    }
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

/** True when no sample of [a, b) reaches -60 dBFS. */
function isSilent(samples: Float32Array, a: number, b: number): boolean {
  const end = Math.min(samples.length, b);
  for (let i = a; i < end; i++) if (samples[i]! > 0.001 || samples[i]! < -0.001) return false;
  return true;
}
