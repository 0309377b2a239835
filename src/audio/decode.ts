// Decoders to mono float: WAV (any common variant, via wavefile), MP3 (mpg123-decoder), FLAC.
import wavefile from 'wavefile';
import { crc16Update, crc8 } from './encode/flac.js';

const { WaveFile } = wavefile;

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  audioFormat: number;
  dataOffset: number;
  dataBytes: number;
  frames: number;
}

/** Walks the RIFF chunks. Tolerates streamed WAVs (sizes 0xFFFFFFFF) and truncated data. */
export function readWav(b: Buffer): WavInfo | null {
  let at = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes' | 'frames'> | null = null;
  while (at + 8 <= b.length) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= b.length) {
      let audioFormat = b.readUInt16LE(at + 8);
      if (audioFormat === 0xfffe && size >= 40) audioFormat = b.readUInt16LE(at + 32); // extensible
      fmt = { audioFormat, channels: b.readUInt16LE(at + 10), sampleRate: b.readUInt32LE(at + 12), bitsPerSample: b.readUInt16LE(at + 22) };
    } else if (id === 'data') {
      if (!fmt || !fmt.channels || !fmt.sampleRate || !fmt.bitsPerSample) return null;
      const dataBytes = Math.min(size, b.length - at - 8);
      const frameBytes = (fmt.bitsPerSample / 8) * fmt.channels;
      return { ...fmt, dataOffset: at + 8, dataBytes, frames: Math.floor(dataBytes / frameBytes) };
    }
    if (size === 0xffffffff) return null;
    at += 8 + size + (size & 1);
  }
  return null;
}

function mixDown(channels: Float32Array[] | Float64Array[], frames: number): Float32Array {
  const out = new Float32Array(frames);
  for (const c of channels) for (let i = 0; i < frames; i++) out[i]! += c[i]! / channels.length;
  return out;
}

/** Reader of one sample at a byte offset, as float in [-1, 1], for the plain PCM/float layouts. */
function sampleReader(b: Buffer, format: number, bits: number): ((at: number) => number) | null {
  if (format === 1 && bits === 8) return (at) => (b[at]! - 128) / 128;
  if (format === 1 && bits === 16) return (at) => b.readInt16LE(at) / 32768;
  if (format === 1 && bits === 24) return (at) => b.readIntLE(at, 3) / 8388608;
  if (format === 1 && bits === 32) return (at) => b.readInt32LE(at) / 2147483648;
  if (format === 3 && bits === 32) return (at) => b.readFloatLE(at);
  if (format === 3 && bits === 64) return (at) => b.readDoubleLE(at);
  return null;
}

/** Whether the WAV's codec and bit depth are ones `decodeWav` reads (PCM, float, A/mu-law, IMA ADPCM). */
export function wavCodecReadable(w: WavInfo): boolean {
  const { audioFormat: f, bitsPerSample: bits } = w;
  return (
    (f === 1 && [8, 16, 24, 32].includes(bits)) || (f === 3 && (bits === 32 || bits === 64)) || ((f === 6 || f === 7) && bits === 8) || (f === 17 && bits === 4)
  );
}

/** Mono float samples of a WAV whose layout `readWav` gave and `wavCodecReadable` accepted. */
export function decodeWav(b: Buffer, w: WavInfo): { samples: Float32Array; sampleRate: number } {
  const read = sampleReader(b, w.audioFormat, w.bitsPerSample);
  if (read) {
    const bytes = w.bitsPerSample / 8;
    const out = new Float32Array(w.frames);
    for (let i = 0; i < w.frames; i++) {
      let s = 0;
      for (let c = 0; c < w.channels; c++) s += read(w.dataOffset + (i * w.channels + c) * bytes);
      out[i] = s / w.channels;
    }
    return { samples: out, sampleRate: w.sampleRate };
  }
  // Other encodings (A-law, mu-law, IMA ADPCM): rebuild a well-formed file for wavefile.
  const fixed = Buffer.concat([b.subarray(0, w.dataOffset), b.subarray(w.dataOffset, w.dataOffset + w.dataBytes)]);
  fixed.writeUInt32LE(fixed.length - 8, 4);
  fixed.writeUInt32LE(w.dataBytes, w.dataOffset - 4);
  const wav = new WaveFile(fixed);
  if (w.audioFormat === 6) wav.fromALaw();
  else if (w.audioFormat === 7) wav.fromMuLaw();
  else if (w.audioFormat === 17) wav.fromIMAADPCM();
  wav.toBitDepth('32f');
  const raw = wav.getSamples(false, Float32Array) as unknown as Float32Array | Float32Array[];
  const chans = w.channels === 1 ? [raw as Float32Array] : (raw as Float32Array[]);
  return { samples: mixDown(chans, chans[0]!.length), sampleRate: w.sampleRate };
}

export async function decodeMp3(b: Buffer): Promise<{ samples: Float32Array; sampleRate: number }> {
  // Loaded on first use: the WebAssembly decoders are not needed to start the emulator.
  const { MPEGDecoder } = await import('mpg123-decoder');
  const dec = new MPEGDecoder();
  await dec.ready;
  try {
    const r = dec.decode(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    if (!r.samplesDecoded) throw new Error('no MPEG frames');
    return { samples: mixDown(r.channelData, r.samplesDecoded), sampleRate: r.sampleRate };
  } finally {
    dec.free();
  }
}

/** Length of a FLAC frame header at `i` whose CRC-8 is valid, or 0. */
function flacHeaderAt(b: Uint8Array, i: number): number {
  if (i + 6 > b.length || b[i] !== 0xff || (b[i + 1]! & 0xfe) !== 0xf8) return 0;
  const bs = b[i + 2]! >> 4;
  const sr = b[i + 2]! & 15;
  if (bs === 0 || sr === 15 || b[i + 3]! & 1) return 0;
  const lead = b[i + 4]!;
  let utf = 1;
  if (lead >= 0xc0) for (let m = 0x40; lead & m && utf < 7; m >>= 1) utf++;
  let len = 4 + utf + (bs === 6 ? 1 : bs === 7 ? 2 : 0) + (sr === 12 ? 1 : sr === 13 || sr === 14 ? 2 : 0);
  if (i + len + 1 > b.length) return 0;
  return crc8(b, i, i + len) === b[i + len] ? ++len : 0;
}

/**
 * Splits native FLAC into frames: a boundary is a valid frame header where the running CRC-16
 * of the previous frame is zero. (codec-parser merges the last two frames when they are tiny,
 * e.g. CONSTANT silence frames, and the decoder then loses the last one.)
 */
export function splitFlacFrames(b: Uint8Array): Uint8Array[] {
  let at = 4;
  for (let last = false; !last && at + 4 <= b.length;) {
    last = (b[at]! & 0x80) !== 0;
    at += 4 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
  }
  const frames: Uint8Array[] = [];
  let start = at;
  while (start < b.length && flacHeaderAt(b, start)) {
    let end = b.length;
    let crc = 0;
    for (let i = start; i < b.length; i++) {
      if (i > start + 2 && crc === 0 && b[i] === 0xff && flacHeaderAt(b, i)) {
        end = i;
        break;
      }
      crc = crc16Update(crc, b[i]!);
    }
    frames.push(b.subarray(start, end));
    start = end;
  }
  return frames;
}

export async function decodeFlac(b: Buffer): Promise<{ samples: Float32Array; sampleRate: number }> {
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const dec = new FLACDecoder();
  await dec.ready;
  try {
    const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    const r = await dec.decodeFrames(splitFlacFrames(bytes));
    if (!r.samplesDecoded) throw new Error('no FLAC frames');
    return { samples: mixDown(r.channelData, r.samplesDecoded), sampleRate: r.sampleRate };
  } finally {
    dec.free();
  }
}
