import { createHash } from 'node:crypto';
import type { DialogueInput, SynthInput, SynthSettings } from './types.js';

/** Settings that change the audio, in a fixed order, with defaults filled in. */
function canonicalSettings(s: SynthSettings): unknown[] {
  const vm = s.voiceModify ?? {};
  return [
    s.speed ?? 1,
    s.vol ?? 1,
    s.pitch ?? 0,
    s.emotion ?? null,
    [vm.pitch ?? 0, vm.intensity ?? 0, vm.timbre ?? 0, vm.soundEffect ?? null],
    !!s.textNormalization,
    !!s.pauseMarkers,
    !!s.tags,
    (s.pronunciations ?? []).map((p) => [p.text, p.replacement]),
    !!s.latex,
    !!s.watermark,
    s.sampleRate,
    s.channels,
    // Only when given, so ids of syntheses without interjections stay what they were.
    ...(s.interjections ? [Object.entries(s.interjections).sort()] : []),
  ];
}

function voicesKey(voices: { id: string; weight: number }[]): unknown[] {
  return voices.map((v) => [v.id, v.weight]);
}

/**
 * Deterministic id of a synthesis: 16 lowercase hex chars (64 bits) of SHA-256 over the text,
 * the voices and every setting that changes the audio. It is embedded in the audio itself.
 */
export function signatureIdFor(input: SynthInput | DialogueInput): string {
  const body =
    'turns' in input
      ? ['dialogue', input.turns.map((t) => [t.text, voicesKey(t.voices), t.speaker]), input.turnGapMs ?? 400]
      : ['single', input.text, voicesKey(input.voices)];
  const json = JSON.stringify([1, body, canonicalSettings(input)]);
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}
