import { endianness } from 'node:os';
import { encodeAudio, encodeAudioStream, type SynthResult } from '../../../audio/index.js';

/**
 * WAV and raw PCM framing of platform synthesis. The audio engine's encoders are used; while they are
 * unavailable (the engine is still being finished) the same bytes are framed here: a 44-byte header,
 * with RIFF and data sizes 0xFFFFFFFF when streamed (the length is unknown while sending).
 */
export type TtsFormat = 'wav' | 'pcm';

const UNKNOWN = 0xffffffff;

export function wavHeader(dataBytes: number | null, sampleRate: number, channels: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(dataBytes === null ? UNKNOWN : 36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes === null ? UNKNOWN : dataBytes, 40);
  return h;
}

/** Little-endian bytes of Int16 samples (copied: the engine may reuse its blocks). */
function le16(block: Int16Array): Buffer {
  if (endianness() === 'LE') return Buffer.from(new Uint8Array(block.buffer, block.byteOffset, block.byteLength));
  const out = Buffer.alloc(block.length * 2);
  for (let i = 0; i < block.length; i++) out.writeInt16LE(block[i]!, i * 2);
  return out;
}

async function* frameLocally(format: TtsFormat, blocks: AsyncIterable<Int16Array>, sampleRate: number, channels: number): AsyncGenerator<Buffer> {
  let first = format === 'wav';
  for await (const block of blocks) {
    const bytes = le16(block);
    if (first) {
      first = false;
      yield Buffer.concat([wavHeader(null, sampleRate, channels), bytes]);
    } else yield bytes;
  }
  if (first) yield wavHeader(null, sampleRate, channels);
}

/** Chunks of a streamed response, each produced as the synthesis advances. */
export function pcmChunks(format: TtsFormat, blocks: AsyncIterable<Int16Array>, sampleRate: number, channels: 1 | 2): AsyncIterable<Buffer> {
  try {
    return encodeAudioStream(format, blocks, { sampleRate, channels });
  } catch {
    return frameLocally(format, blocks, sampleRate, channels);
  }
}

/** A whole file with true sizes. */
export async function wholeFile(format: TtsFormat, result: SynthResult): Promise<Buffer> {
  try {
    return (await encodeAudio(format, result, { sampleRate: result.sampleRate, channels: result.channels })).bytes;
  } catch {
    const data = le16(result.pcm);
    return format === 'wav' ? Buffer.concat([wavHeader(data.length, result.sampleRate, result.channels), data]) : data;
  }
}
