/**
 * Decoding input audio in bounded slices: mono float samples from the start, at most SLICE_FRAMES at a
 * time, with a turn of the event loop between slices (other requests run while a long file decodes),
 * and never past `maxFrames`. A caller holds one slice or reduces it (an energy profile), so the PCM
 * in memory stays bounded whatever the file declares or really holds.
 */
import { decodeImaBlock, flacFrames, imaFramesPerBlock, sampleReader, type WavInfo } from './decode.js';
import { nextTurn } from './event-loop.js';

/** Sample frames per slice (about 1.4 s at 48 kHz; 256 KB of float). */
export const SLICE_FRAMES = 65536;
/** Compressed bytes handed to the MP3 decoder at a time. */
const MP3_FEED_BYTES = 8 * 1024;
/** FLAC frames handed to the decoder at a time (4096-sample frames: about 1.5 s at 44.1 kHz). */
const FLAC_FEED_FRAMES = 16;

export interface MonoSlice {
  samples: Float32Array;
  sampleRate: number;
}

/** What to decode: a WAV or raw PCM16 layout read from the header, or MP3 / FLAC bytes. */
export type DecodeSource = { kind: 'wav'; bytes: Buffer; layout: WavInfo } | { kind: 'mp3' | 'flac'; bytes: Buffer };

/** Mono slices from the start of the audio, stopping once `maxFrames` frames were given. */
export async function* monoSlices(src: DecodeSource, maxFrames = Infinity): AsyncGenerator<MonoSlice> {
  let given = 0;
  const inner = src.kind === 'wav' ? wavSlices(src.bytes, src.layout) : src.kind === 'mp3' ? mp3Slices(src.bytes) : flacSlices(src.bytes);
  try {
    for await (const slice of inner) {
      const room = maxFrames - given;
      if (room <= 0) return;
      const samples = slice.samples.length > room ? slice.samples.subarray(0, room) : slice.samples;
      given += samples.length;
      yield { samples, sampleRate: slice.sampleRate };
      await nextTurn();
    }
  } finally {
    await inner.return(undefined);
  }
}

/** The slices joined into one array (at most `maxFrames` long); throws when nothing decodes. */
export async function decodeMonoBounded(src: DecodeSource, maxFrames: number): Promise<MonoSlice> {
  const parts: Float32Array[] = [];
  let rate = 0;
  let total = 0;
  for await (const s of monoSlices(src, maxFrames)) {
    parts.push(s.samples);
    rate = s.sampleRate;
    total += s.samples.length;
  }
  if (!total) throw new Error(`no ${src.kind === 'wav' ? 'WAV samples' : src.kind === 'mp3' ? 'MPEG frames' : 'FLAC frames'}`);
  const samples = new Float32Array(total);
  let at = 0;
  for (const p of parts) {
    samples.set(p, at);
    at += p.length;
  }
  return { samples, sampleRate: rate };
}

function* wavSlices(b: Buffer, w: WavInfo): Generator<MonoSlice> {
  if (w.audioFormat === 17) {
    const perBlock = imaFramesPerBlock(w);
    const blocksPerSlice = Math.max(1, Math.floor(SLICE_FRAMES / perBlock));
    for (let frame = 0, at = w.dataOffset; frame < w.frames;) {
      const frames = Math.min(w.frames - frame, blocksPerSlice * perBlock);
      const out = new Float32Array(frames);
      for (let n = 0; n < frames; n += perBlock, at += w.blockAlign) {
        const end = Math.min(at + w.blockAlign, w.dataOffset + w.dataBytes);
        decodeImaBlock(b.subarray(at, end), w.channels, out, n, Math.min(perBlock, frames - n));
      }
      frame += frames;
      yield { samples: out, sampleRate: w.sampleRate };
    }
    return;
  }
  const read = sampleReader(b, w.audioFormat, w.bitsPerSample);
  if (!read) throw new Error(`WAV codec ${w.audioFormat} is not decoded`);
  const bytes = w.bitsPerSample / 8;
  for (let first = 0; first < w.frames; first += SLICE_FRAMES) {
    const out = new Float32Array(Math.min(SLICE_FRAMES, w.frames - first));
    for (let i = 0; i < out.length; i++) {
      let s = 0;
      for (let c = 0; c < w.channels; c++) s += read(w.dataOffset + ((first + i) * w.channels + c) * bytes);
      out[i] = s / w.channels;
    }
    yield { samples: out, sampleRate: w.sampleRate };
  }
}

function mono(channels: Float32Array[], frames: number): Float32Array {
  if (channels.length === 1) return channels[0]!.slice(0, frames);
  const out = new Float32Array(frames);
  for (const c of channels) for (let i = 0; i < frames; i++) out[i]! += c[i]! / channels.length;
  return out;
}

async function* mp3Slices(b: Buffer): AsyncGenerator<MonoSlice> {
  // Loaded on first use: the WebAssembly decoders are not needed to start the emulator.
  const { MPEGDecoder } = await import('mpg123-decoder');
  const dec = new MPEGDecoder();
  await dec.ready;
  try {
    for (let at = 0; at < b.length; at += MP3_FEED_BYTES) {
      const end = Math.min(b.length, at + MP3_FEED_BYTES);
      const r = dec.decode(new Uint8Array(b.buffer, b.byteOffset + at, end - at));
      // A hostile low-bitrate file can expand a feed a thousandfold: hand it on in slices.
      for (let from = 0; from < r.samplesDecoded; from += SLICE_FRAMES) {
        const n = Math.min(SLICE_FRAMES, r.samplesDecoded - from);
        yield {
          samples: mono(
            r.channelData.map((c) => c.subarray(from, from + n)),
            n,
          ),
          sampleRate: r.sampleRate,
        };
      }
    }
  } finally {
    dec.free();
  }
}

async function* flacSlices(b: Buffer): AsyncGenerator<MonoSlice> {
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const dec = new FLACDecoder();
  await dec.ready;
  try {
    const frames = flacFrames(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    for (let done = false; !done;) {
      const batch: Uint8Array[] = [];
      for (let i = 0; i < FLAC_FEED_FRAMES; i++) {
        const next = frames.next();
        if (next.done) {
          done = true;
          break;
        }
        batch.push(next.value);
      }
      if (!batch.length) break;
      const r = await dec.decodeFrames(batch);
      if (r.samplesDecoded) yield { samples: mono(r.channelData, r.samplesDecoded), sampleRate: r.sampleRate };
    }
  } finally {
    dec.free();
  }
}
