// Raw PCM: signed 16-bit little-endian, interleaved, and the 44-byte WAV header.

/** Little-endian bytes of interleaved Int16 samples (a copy). */
export function pcmBytes(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

/**
 * The canonical 44-byte header of a 16-bit PCM WAV file. `dataBytes` null writes the streaming
 * form: RIFF and data sizes 0xFFFFFFFF (length unknown while streaming).
 */
export function wavHeader(sampleRate: number, channels: number, dataBytes: number | null): Buffer {
  const h = Buffer.alloc(44);
  const unknown = dataBytes === null;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(unknown ? 0xffffffff : 36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(unknown ? 0xffffffff : dataBytes, 40);
  return h;
}
