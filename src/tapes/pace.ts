/**
 * How much audio a replayed chunk carries, for the `rtf` pace (core/stream/shaping.ts): the stream guard holds each
 * audio frame until the audio before it would have played at `rtf`, so it must know each frame's length in ms. A tape
 * keeps the real service's bytes, not their durations: the stream's whole audio is read from its headers (probeAudio,
 * never decoded; raw PCM by the rate and channels the request asked for) and shared among the chunks by their bytes.
 */
import { probeAudio } from '../audio/index.js';
import type { ProbeHint } from '../audio/types.js';
import type { Tape } from './format.js';

/** What a reader of the tape's audio needs to know of raw PCM: the rate and channels the request asked for. */
export function audioHintOf(tape: Tape): ProbeHint {
  const body = 'json' in tape.request.body ? (tape.request.body.json as { audio_setting?: { sample_rate?: number; channel?: number } }) : undefined;
  const setting = body?.audio_setting;
  return { rawPcm: { sampleRate: setting?.sample_rate ?? 32000, channels: setting?.channel ?? 1 } };
}

/**
 * Milliseconds of audio per byte of a stream whose chunks are `chunks`, in order: the length of their whole audio (or
 * `statedMs`, what the service said, when its headers cannot be read) over their bytes; 0 when neither is known.
 */
export async function msPerByte(chunks: Buffer[], hint: ProbeHint, statedMs?: number): Promise<number> {
  const bytes = chunks.reduce((n, c) => n + c.length, 0);
  if (bytes === 0) return 0;
  let ms = statedMs;
  try {
    ms = (await probeAudio(Buffer.concat(chunks), hint)).durationMs;
  } catch {
    // Not readable from its headers: the stated length, if any.
  }
  return ms && ms > 0 && Number.isFinite(ms) ? ms / bytes : 0;
}
