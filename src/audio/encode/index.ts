import type { AudioFormat, EncodedAudio, EncodedStream, EncodeOptions, PcmSource } from '../types.js';

export type EncodeSource = PcmSource | AsyncIterable<Int16Array>;

export function mp3Bitrate(_sampleRate: number, _requested: number): number {
  throw new Error('not implemented yet');
}
export async function encodeAudio(_f: AudioFormat, _s: EncodeSource, _o: EncodeOptions): Promise<EncodedAudio> {
  throw new Error('not implemented yet');
}
export function encodeAudioStream(_f: AudioFormat, _s: EncodeSource, _o: EncodeOptions): EncodedStream {
  throw new Error('not implemented yet');
}
