/**
 * In-process Ogg/Vorbis decoding for `/_emulator/hear`: the `@wasm-audio-decoders/ogg-vorbis`
 * WebAssembly decoder (shipped inside the package, nothing fetched), fed the file a piece at a
 * time with a turn of the event loop between pieces, mixed to mono, stopping at `maxFrames`.
 */
import { nextTurn } from '../event-loop.js';

/** Compressed bytes handed to the decoder at a time. */
const FEED_BYTES = 64 * 1024;

/** Whether an Ogg file's first packet is a Vorbis identification header (`\x01vorbis`). */
export function isOggVorbis(b: Buffer): boolean {
  if (b.length < 28 || b.toString('latin1', 0, 4) !== 'OggS') return false;
  const body = 27 + b[26]!;
  return b[body] === 0x01 && b.toString('latin1', body + 1, body + 7) === 'vorbis';
}

/** Mono float samples of an Ogg/Vorbis file, at most `maxFrames` of them; throws with the reason when it cannot. */
export async function decodeOggVorbis(b: Buffer, maxFrames = Infinity): Promise<{ samples: Float32Array; sampleRate: number }> {
  const { OggVorbisDecoder } = await import('@wasm-audio-decoders/ogg-vorbis');
  const dec = new OggVorbisDecoder();
  await dec.ready;
  const pieces: Float32Array[] = [];
  let total = 0;
  let sampleRate = 0;
  const take = (r: { channelData: Float32Array[]; samplesDecoded: number; sampleRate: number }) => {
    const n = Math.min(r.samplesDecoded, maxFrames - total);
    if (n <= 0 || r.channelData.length === 0) return;
    sampleRate = r.sampleRate;
    const out = new Float32Array(n);
    for (const channel of r.channelData) for (let i = 0; i < n; i++) out[i]! += channel[i]! / r.channelData.length;
    pieces.push(out);
    total += n;
  };
  try {
    for (let at = 0; at < b.length && total < maxFrames; at += FEED_BYTES) {
      take(await dec.decode(new Uint8Array(b.buffer, b.byteOffset + at, Math.min(FEED_BYTES, b.length - at))));
      await nextTurn();
    }
    if (total < maxFrames) take(await dec.flush());
  } finally {
    dec.free();
  }
  if (total === 0) throw new Error('no Vorbis audio could be decoded');
  const all = new Float32Array(total);
  let o = 0;
  for (const p of pieces) {
    all.set(p, o);
    o += p.length;
  }
  return { samples: all, sampleRate };
}
