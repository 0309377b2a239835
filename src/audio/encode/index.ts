// Encoding of PCM (whole or streamed) to MP3, WAV, FLAC or raw PCM, with decoder-true metadata.
import type { AudioFormat, AudioMeta, EncodedAudio, EncodedStream, EncodeOptions, PcmSource } from '../types.js';
import { flacHeader, flacWriter } from './flac.js';
import { countMp3Frames, mp3Bitrate, mp3FrameSamples, mp3Writer } from './mp3.js';
import { pcmBytes, wavHeader } from './pcm.js';

export { mp3Bitrate } from './mp3.js';

/** A whole PCM buffer, or a stream of interleaved Int16 blocks (e.g. a SynthStream). */
export type EncodeSource = PcmSource | AsyncIterable<Int16Array>;

export interface StreamEncodeOptions extends EncodeOptions {
  /** PCM/WAV chunks are cut to at most this many bytes, on sample frames (default 8192). */
  maxChunkBytes?: number;
}

const SLICE_FRAMES = 4608;
const YIELD_AFTER_MS = 8;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function* blocksOf(source: EncodeSource, channels: number): AsyncGenerator<Int16Array> {
  if (!('pcm' in source)) {
    yield* source;
    return;
  }
  const step = SLICE_FRAMES * channels;
  let last = performance.now();
  for (let at = 0; at < source.pcm.length; at += step) {
    yield source.pcm.subarray(at, Math.min(source.pcm.length, at + step));
    if (performance.now() - last > YIELD_AFTER_MS) {
      await tick();
      last = performance.now();
    }
  }
}

function checkSource(source: EncodeSource, o: EncodeOptions) {
  if ('pcm' in source && (source.sampleRate !== o.sampleRate || source.channels !== o.channels))
    throw new RangeError('encode options must match the PCM source (resampling is not done here)');
}

/**
 * The streaming form: chunks as the source advances. MP3 chunks are whole frames (each starts on
 * a frame sync); PCM/WAV chunks are whole sample frames (a streamed WAV starts with a header whose
 * RIFF/data sizes are 0xFFFFFFFF); FLAC chunks are whole frames, the first holding fLaC +
 * STREAMINFO with total samples and MD5 left zero (unknown while streaming). `meta()` resolves
 * after the last chunk.
 */
export function encodeAudioStream(format: AudioFormat, source: EncodeSource, opts: StreamEncodeOptions): EncodedStream {
  checkSource(source, opts);
  return encodeInternal(format, source, opts);
}

function encodeInternal(format: AudioFormat, source: EncodeSource, opts: StreamEncodeOptions) {
  const { sampleRate: sr, channels: ch } = opts;
  const bitrate = format === 'mp3' ? mp3Bitrate(sr, opts.bitrate ?? 128000) : sr * ch * 16;
  const maxBytes = Math.max(ch * 2, Math.floor((opts.maxChunkBytes ?? 8192) / (ch * 2)) * ch * 2);
  let resolveMeta!: (m: AudioMeta) => void;
  let rejectMeta!: (e: unknown) => void;
  const metaPromise = new Promise<AudioMeta>((res, rej) => {
    resolveMeta = res;
    rejectMeta = rej;
  });
  metaPromise.catch(() => undefined);
  const flac = format === 'flac' ? flacWriter(sr, ch) : null;

  async function* run(): AsyncGenerator<Buffer> {
    let size = 0;
    let frames = 0;
    let mp3Frames = 0;
    const mp3 = format === 'mp3' ? mp3Writer(sr, ch, bitrate) : null;
    let header: Buffer | null =
      format === 'wav' ? wavHeader(sr, ch, null) : format === 'flac' ? flacHeader(sr, ch, 0, null) : null;
    const emit = function* (b: Buffer): Generator<Buffer> {
      if (header) {
        b = Buffer.concat([header, b]);
        header = null;
      }
      if (!b.length) return;
      size += b.length;
      if (format === 'pcm' || format === 'wav') {
        for (let at = 0; at < b.length; at += maxBytes) yield b.subarray(at, at + maxBytes);
      } else yield b;
    };
    let lastYield = performance.now();
    for await (const block of blocksOf(source, ch)) {
      frames += block.length / ch;
      if (mp3 || flac) {
        // Encode in pieces, letting the event loop breathe between them; one chunk per block.
        const piece = (mp3 ? 1152 : 4096) * ch;
        const parts: Buffer[] = [];
        for (let at = 0; at < block.length; at += piece) {
          const sub = block.subarray(at, Math.min(block.length, at + piece));
          parts.push(mp3 ? mp3.push(sub) : flac!.push(sub));
          if (performance.now() - lastYield > YIELD_AFTER_MS) {
            await tick();
            lastYield = performance.now();
          }
        }
        const out = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
        if (mp3) mp3Frames += countMp3Frames(out);
        if (out.length) yield* emit(out);
      } else yield* emit(pcmBytes(block));
    }
    if (mp3) {
      const out = mp3.end();
      mp3Frames += countMp3Frames(out);
      yield* emit(out);
    } else if (flac) yield* emit(flac.end());
    if (header) yield* emit(Buffer.alloc(0));
    const decodedFrames = mp3 ? mp3Frames * mp3FrameSamples(sr) : frames;
    resolveMeta({
      format,
      sampleRate: sr,
      channels: ch,
      bitrate,
      sizeBytes: size,
      durationMs: Math.round((decodedFrames * 1000) / sr),
    });
  }

  let used = false;
  const stream: EncodedStream & { flacTotals: () => ReturnType<NonNullable<typeof flac>['totals']> | null } = {
    format,
    meta: () => metaPromise,
    flacTotals: () => (flac ? flac.totals() : null),
    [Symbol.asyncIterator]() {
      if (used) throw new Error('an encoded stream can be iterated only once');
      used = true;
      const gen = run();
      return {
        next: async () => {
          try {
            return await gen.next();
          } catch (e) {
            rejectMeta(e);
            throw e;
          }
        },
        return: async () => {
          await gen.return(undefined);
          rejectMeta(new Error('stream closed before the end'));
          return { done: true as const, value: undefined };
        },
      };
    },
  };
  return stream;
}

/**
 * A whole file: `{ bytes, meta }`. Equal to the concatenated stream, except that a whole WAV has
 * true RIFF/data sizes and a whole FLAC has the real total samples and MD5 in STREAMINFO.
 */
export async function encodeAudio(format: AudioFormat, source: EncodeSource, opts: EncodeOptions): Promise<EncodedAudio> {
  checkSource(source, opts);
  const stream = encodeInternal(format, source, { ...opts, maxChunkBytes: 1 << 30 });
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  const bytes = Buffer.concat(chunks);
  const meta = await stream.meta();
  if (format === 'wav') {
    bytes.writeUInt32LE(bytes.length - 8, 4);
    bytes.writeUInt32LE(bytes.length - 44, 40);
  } else if (format === 'flac') {
    const t = stream.flacTotals()!;
    flacHeader(opts.sampleRate, opts.channels, t.frames, t.md5).copy(bytes, 0);
  }
  return { bytes, meta };
}
