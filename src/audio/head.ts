/**
 * The first seconds of uploaded audio as mono float samples, enough to read the emulator's signature
 * (it sits in the first ~1.2 s), without decoding the rest of a long file. WAV, AIFF, MP3 and FLAC are
 * decoded in process; AAC, ALAC, Opus and Vorbis need native codecs and give null.
 */
import { imaFramesPerBlock, readWav, splitFlacFrames, wavCodecReadable } from './decode.js';
import { decodeMonoBounded } from './decode-slices.js';
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
        return await wavHead(src);
      case 'aiff':
        return aiffHead(src);
      case 'mp3':
        return await decodeMonoBounded({ kind: 'mp3', bytes: src.bytes(0, MP3_HEAD_BYTES + 65536) }, Math.ceil(HEAD_SECONDS * info.sampleRate));
      case 'flac':
        return await flacHead(src, Math.ceil(HEAD_SECONDS * info.sampleRate));
      default:
        return null;
    }
  } catch {
    return null; // the duration was readable; samples that are not are answered as foreign audio
  }
}

async function wavHead(src: ByteSource): Promise<HeadSamples | null> {
  const probe = readWav(src.bytes(0, 65536));
  if (!probe) return null;
  const frames = Math.ceil(HEAD_SECONDS * probe.sampleRate);
  // Whole blocks for IMA ADPCM (4 bits a sample), whole sample frames for the rest.
  const bytes =
    probe.audioFormat === 17 && wavCodecReadable(probe)
      ? (Math.ceil(frames / imaFramesPerBlock(probe)) + 1) * probe.blockAlign
      : frames * (probe.bitsPerSample / 8) * probe.channels;
  const head = src.bytes(0, probe.dataOffset + bytes);
  const w = readWav(head);
  if (!w || !w.frames || !wavCodecReadable(w)) return null;
  return decodeMonoBounded({ kind: 'wav', bytes: head, layout: w }, frames);
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

async function flacHead(src: ByteSource, maxFrames: number): Promise<HeadSamples | null> {
  const whole = src.size <= FLAC_HEAD_BYTES;
  let head = src.bytes(0, FLAC_HEAD_BYTES);
  if (!whole) {
    // The last frame of a cut head is incomplete: end the head where it starts.
    const frames = splitFlacFrames(new Uint8Array(head.buffer, head.byteOffset, head.byteLength));
    const last = frames.pop();
    if (!last || !frames.length) return null;
    head = head.subarray(0, last.byteOffset - head.byteOffset);
  }
  return decodeMonoBounded({ kind: 'flac', bytes: head }, maxFrames);
}
