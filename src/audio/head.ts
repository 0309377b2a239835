/**
 * The first seconds of uploaded audio as mono float samples, enough to read the emulator's signature
 * (it sits in the first ~1.2 s), without decoding the rest of a long file. WAV, AIFF, MP3 and FLAC are
 * decoded in process; AAC, ALAC, Opus and Vorbis need native codecs and give null.
 */
import { decodeMp3, decodeWav, readWav, splitFlacFrames, wavCodecReadable } from './decode.js';
import { aiffLayout, type ByteSource, type ContainerInfo } from './container.js';

/** Seconds decoded from the start. */
const HEAD_SECONDS = 3;
/** Bytes of compressed audio read from the start (3 s of MP3 at 320 kbps is 120 KB; FLAC is larger). */
const MP3_HEAD_BYTES = 256 * 1024;
const FLAC_HEAD_BYTES = 2 * 1024 * 1024;

export interface HeadSamples {
  samples: Float32Array;
  sampleRate: number;
}

/** Mono samples of the first seconds, or null when the codec is not decoded in process. */
export async function decodeHead(src: ByteSource, info: ContainerInfo): Promise<HeadSamples | null> {
  try {
    switch (info.container) {
      case 'wav':
        return wavHead(src);
      case 'aiff':
        return aiffHead(src);
      case 'mp3':
        return await decodeMp3(src.bytes(0, MP3_HEAD_BYTES + 65536));
      case 'flac':
        return await flacHead(src);
      default:
        return null;
    }
  } catch {
    return null; // the duration was readable; samples that are not are answered as foreign audio
  }
}

function wavHead(src: ByteSource): HeadSamples | null {
  const probe = readWav(src.bytes(0, 65536));
  if (!probe) return null;
  const frameBytes = (probe.bitsPerSample / 8) * probe.channels;
  const head = src.bytes(0, probe.dataOffset + Math.ceil(HEAD_SECONDS * probe.sampleRate) * frameBytes);
  const w = readWav(head);
  if (!w || !w.frames || !wavCodecReadable(w)) return null;
  return decodeWav(head, w);
}

function aiffHead(src: ByteSource): HeadSamples | null {
  const a = aiffLayout(src);
  const littleEndian = a.compression === 'sowt';
  if (a.dataOffset < 0 || !(a.compression === 'NONE' || a.compression === 'twos' || littleEndian)) return null;
  const bytes = Math.ceil(a.bitsPerSample / 8);
  if (bytes < 1 || bytes > 4) return null;
  const frames = Math.min(a.frames, Math.ceil(HEAD_SECONDS * a.sampleRate));
  const data = src.bytes(a.dataOffset, frames * bytes * a.channels);
  const count = Math.floor(data.length / (bytes * a.channels));
  const out = new Float32Array(count);
  const scale = 2 ** (bytes * 8 - 1);
  for (let i = 0; i < count; i++) {
    let sum = 0;
    for (let c = 0; c < a.channels; c++) {
      const at = (i * a.channels + c) * bytes;
      sum += (littleEndian ? data.readIntLE(at, bytes) : data.readIntBE(at, bytes)) / scale;
    }
    out[i] = sum / a.channels;
  }
  return { samples: out, sampleRate: Math.round(a.sampleRate) };
}

async function flacHead(src: ByteSource): Promise<HeadSamples | null> {
  const whole = src.size <= FLAC_HEAD_BYTES;
  const head = src.bytes(0, FLAC_HEAD_BYTES);
  const frames = splitFlacFrames(new Uint8Array(head.buffer, head.byteOffset, head.byteLength));
  if (!whole) frames.pop(); // the last frame of a cut head is incomplete
  if (!frames.length) return null;
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const dec = new FLACDecoder();
  await dec.ready;
  try {
    const r = await dec.decodeFrames(frames);
    if (!r.samplesDecoded) return null;
    const out = new Float32Array(r.samplesDecoded);
    for (const ch of r.channelData) for (let i = 0; i < r.samplesDecoded; i++) out[i]! += ch[i]! / r.channelData.length;
    return { samples: out, sampleRate: r.sampleRate };
  } finally {
    dec.free();
  }
}
