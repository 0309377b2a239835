/**
 * WAV and raw PCM framing of platform synthesis, by the audio engine's encoders: a whole file has true
 * sizes; a streamed WAV starts with a header whose RIFF and data sizes are 0xFFFFFFFF (addendum B).
 */
import { encodeAudio, encodeAudioStream, type SynthResult } from '../../../audio/index.js';

export type TtsFormat = 'wav' | 'pcm';

/** Chunks of a streamed response, each produced as the synthesis advances. */
export function pcmChunks(format: TtsFormat, blocks: AsyncIterable<Int16Array>, sampleRate: number, channels: 1 | 2): AsyncIterable<Buffer> {
  return encodeAudioStream(format, blocks, { sampleRate, channels });
}

/** A whole file with true sizes. */
export async function wholeFile(format: TtsFormat, result: SynthResult): Promise<Buffer> {
  return (await encodeAudio(format, result, { sampleRate: result.sampleRate, channels: result.channels })).bytes;
}
