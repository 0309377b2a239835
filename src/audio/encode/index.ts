/**
 * Encoding of PCM (whole or streamed) to MP3, WAV, FLAC, raw PCM, μ-law (raw or WAV) or Ogg/Opus,
 * with decoder-true metadata. This module owns audio framing; callers (SSE, WebSocket, files) only
 * wrap what it yields.
 *
 * `encodeAudioStream(format, source, { sampleRate, channels, bitrate, serial, maxChunkBytes, keepWhole })`
 * - yields chunks of whole frames: MP3 frames (each chunk starts on a frame sync and every frame
 *   is self-contained: no bit reservoir), FLAC frames (the first chunk starts with fLaC +
 *   STREAMINFO), PCM or μ-law sample frames (a WAV stream starts with its header), Ogg pages (the
 *   first chunk holds OpusHead, OpusTags and at least one audio page);
 * - `maxChunkBytes` caps every chunk, cut on those frame boundaries; a chunk is larger only when
 *   one frame alone is (the default: PCM/WAV/μ-law 8,192 bytes, MP3/FLAC/Opus one chunk per
 *   synthesis block);
 * - joined, the chunks are one valid file; while streaming the length is unknown, so a WAV header
 *   says 0xFFFFFFFF and FLAC's STREAMINFO leaves total samples and MD5 zero, as streaming
 *   encoders do (a μ-law WAV carries true sizes when `totalFrames` is given). With `keepWhole`,
 *   `wholeFile()` then gives the same bytes with the true totals (WAV sizes, FLAC total samples
 *   and MD5): the file to hand out as one piece. Ogg/Opus pages never change: the joined chunks are
 *   the whole file;
 * - `meta()` resolves after the last chunk: format, rate, channels, true bitrate, size (equal for
 *   the joined chunks and the whole file) and the duration a decoder measures.
 * Each chunk of one stream joined in order with the others of the same stream is valid; a chunk
 * of another format or stream is not. The MP3 encoder is ./mp3.ts, FLAC ./flac.ts, PCM/WAV
 * ./pcm.ts, μ-law ./mulaw.ts, Opus ./opus.ts (with Ogg pages from ./ogg.ts); a further format adds
 * its file and one case in `run`.
 */
import { deferred, nextTurn } from '../event-loop.js';
import type { AudioFormat, AudioMeta, EncodedAudio, EncodedStream, EncodeOptions, PcmSource } from '../types.js';
import { flacHeader, flacWriter, type FlacWriter } from './flac.js';
import { frameAt, mp3Bitrate, mp3FrameSamples, mp3Writer, type Mp3Writer } from './mp3.js';
import { mulawBytes, mulawWavHeader } from './mulaw.js';
import { OPUS_BITRATE_PER_CHANNEL, opusWriter, type OpusWriter } from './opus.js';
import { pcmBytes, wavHeader } from './pcm.js';

export { mp3Bitrate } from './mp3.js';
export { opusEncoderProblem, OPUS_INPUT_RATES } from './opus.js';

/** The bitrate a stream of this format reports (MP3: the legal CBR rate nearest the request). */
export function reportedBitrate(format: AudioFormat, sampleRate: number, channels: number, requested = 128000): number {
  if (format === 'mp3') return mp3Bitrate(sampleRate, requested);
  if (format === 'opus') return OPUS_BITRATE_PER_CHANNEL * channels;
  if (format === 'pcmu_raw' || format === 'pcmu_wav') return sampleRate * channels * 8;
  return sampleRate * channels * 16;
}

/** A whole PCM buffer, or a stream of interleaved Int16 blocks (e.g. a SynthStream). */
export type EncodeSource = PcmSource | AsyncIterable<Int16Array>;

export interface StreamEncodeOptions extends EncodeOptions {
  /** Largest chunk in bytes, cut on frame boundaries (default: PCM/WAV 8192, MP3/FLAC uncapped). */
  maxChunkBytes?: number;
  /** Keep the encoded bytes so `wholeFile()` can return the complete file. */
  keepWhole?: boolean;
  /**
   * Sample frames the source will yield, when known up front: a streamed FLAC header then carries
   * them, and a streamed μ-law WAV header its true sizes.
   */
  totalFrames?: number;
}

const SLICE_FRAMES = 4608;
const YIELD_AFTER_MS = 8;

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
      await nextTurn();
      last = performance.now();
    }
  }
}

function checkSource(source: EncodeSource, o: EncodeOptions) {
  if ('pcm' in source && (source.sampleRate !== o.sampleRate || source.channels !== o.channels))
    throw new RangeError('encode options must match the PCM source (resampling is not done here)');
}

/** Splits whole-frame MP3 bytes into their frames. */
function mp3Frames(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length;) {
    const len = frameAt(bytes, i)?.len ?? bytes.length - i;
    out.push(bytes.subarray(i, i + len));
    i += len;
  }
  return out;
}

/**
 * Groups indivisible units (frames) into chunks of at most `cap` bytes; PCM units are cut on
 * sample frames (`align` bytes).
 */
function* pack(units: Buffer[], cap: number, align: number): Generator<Buffer> {
  let group: Buffer[] = [];
  let size = 0;
  const flush = function* () {
    if (size) yield group.length === 1 ? group[0]! : Buffer.concat(group, size);
    group = [];
    size = 0;
  };
  for (let u of units) {
    if (align) {
      // PCM: fill the open chunk to the cap, then whole aligned pieces.
      while (size + u.length > cap) {
        const room = Math.max(align, Math.floor((cap - size) / align) * align);
        if (size && room > cap - size) yield* flush();
        else {
          group.push(u.subarray(0, room));
          size += room;
          u = u.subarray(room);
          yield* flush();
        }
      }
    } else if (size && size + u.length > cap) yield* flush();
    if (u.length) {
      group.push(u);
      size += u.length;
    }
  }
  yield* flush();
}

/** The streaming form (see the module comment). */
export function encodeAudioStream(format: AudioFormat, source: EncodeSource, opts: StreamEncodeOptions): EncodedStream {
  checkSource(source, opts);
  return encodeInternal(format, source, opts);
}

function encodeInternal(format: AudioFormat, source: EncodeSource, opts: StreamEncodeOptions): EncodedStream {
  const { sampleRate: sr, channels: ch } = opts;
  const bitrate = reportedBitrate(format, sr, ch, opts.bitrate);
  const mulaw = format === 'pcmu_raw' || format === 'pcmu_wav';
  const pcmLike = format === 'pcm' || format === 'wav' || mulaw;
  const cap = Math.max(1, opts.maxChunkBytes ?? (pcmLike ? 8192 : Infinity));
  const align = mulaw ? ch : pcmLike ? ch * 2 : 0;
  const meta = deferred<AudioMeta>();
  const whole = deferred<Buffer>();
  const trueHeader = deferred<Buffer | null>();

  async function* run(): AsyncGenerator<Buffer> {
    let size = 0;
    let frames = 0;
    let mp3Count = 0;
    const kept: Buffer[] = [];
    const mp3: Mp3Writer | null = format === 'mp3' ? await mp3Writer(sr, ch, bitrate) : null;
    const flac: FlacWriter | null = format === 'flac' ? flacWriter(sr, ch) : null;
    const opus: OpusWriter | null = format === 'opus' ? opusWriter({ sampleRate: sr, channels: ch, serial: opts.serial ?? 0 }) : null;
    let header: Buffer | null =
      format === 'wav'
        ? wavHeader(sr, ch, null)
        : format === 'flac'
          ? flacHeader(sr, ch, opts.totalFrames ?? 0, null)
          : format === 'pcmu_wav'
            ? mulawWavHeader(sr, ch, opts.totalFrames ?? 0)
            : (opus?.header ?? null);
    const emit = function* (units: Buffer[]): Generator<Buffer> {
      // The Ogg header pages wait for the first audio page: a first chunk is never headers alone.
      if (opus && !units.length) return;
      if (header) {
        units = [header, ...units];
        header = null;
      }
      for (const chunk of pack(units, cap, align)) {
        size += chunk.length;
        if (opts.keepWhole) kept.push(chunk);
        yield chunk;
      }
    };
    let lastYield = performance.now();
    try {
      for await (const block of blocksOf(source, ch)) {
        frames += block.length / ch;
        if (mulaw) {
          yield* emit([mulawBytes(block)]);
          continue;
        }
        if (opus) {
          yield* emit(opus.push(block));
          continue;
        }
        if (!mp3 && !flac) {
          yield* emit([pcmBytes(block)]);
          continue;
        }
        // Encode in pieces, letting the event loop breathe between them; chunks leave per block.
        const piece = (mp3 ? 1152 : 4096) * ch;
        const units: Buffer[] = [];
        for (let at = 0; at < block.length; at += piece) {
          const sub = block.subarray(at, Math.min(block.length, at + piece));
          if (mp3) units.push(...mp3Frames(mp3.push(sub)));
          else units.push(...flac!.push(sub));
          if (performance.now() - lastYield > YIELD_AFTER_MS) {
            await nextTurn();
            lastYield = performance.now();
          }
        }
        if (mp3) mp3Count += units.length;
        yield* emit(units);
      }
      const tail = mp3 ? mp3Frames(mp3.end()) : flac ? flac.end() : opus ? opus.end() : [];
      // A μ-law WAV's data chunk is padded to an even size (the header counts the pad byte).
      if (format === 'pcmu_wav' && (frames * ch) & 1) tail.push(Buffer.alloc(1, 0xff));
      if (mp3) mp3Count += tail.length;
      yield* emit(tail);
    } finally {
      opus?.close();
    }
    const decodedFrames = mp3 ? mp3Count * mp3FrameSamples(sr) : frames;
    meta.resolve({ format, sampleRate: sr, channels: ch, bitrate, sizeBytes: size, durationMs: Math.round((decodedFrames * 1000) / sr) });
    let finalHeader: Buffer | null = null;
    if (format === 'wav') finalHeader = wavHeader(sr, ch, size - 44);
    if (format === 'pcmu_wav') finalHeader = mulawWavHeader(sr, ch, frames);
    if (flac) {
      const t = flac.totals();
      finalHeader = flacHeader(sr, ch, t.frames, t.md5);
    }
    trueHeader.resolve(finalHeader);
    if (opts.keepWhole) {
      const file = Buffer.concat(kept, size);
      finalHeader?.copy(file, 0);
      whole.resolve(file);
    } else whole.reject(new Error('wholeFile() needs the stream opened with keepWhole'));
  }

  const fail = (e: unknown) => {
    meta.reject(e);
    whole.reject(e);
    trueHeader.reject(e);
  };
  let used = false;
  return {
    format,
    meta: () => meta.promise,
    wholeFile: () => whole.promise,
    finalHeader: () => trueHeader.promise,
    [Symbol.asyncIterator]() {
      if (used) throw new Error('an encoded stream can be iterated only once');
      used = true;
      const gen = run();
      return {
        next: async () => {
          try {
            return await gen.next();
          } catch (e) {
            fail(e);
            throw e;
          }
        },
        return: async () => {
          await gen.return(undefined);
          fail(new Error('stream closed before the end'));
          return { done: true as const, value: undefined };
        },
      };
    },
  };
}

/**
 * A whole file: `{ bytes, meta }`. Equal to the joined stream, except that a whole WAV has true
 * RIFF/data sizes and a whole FLAC has the real total samples and MD5 in STREAMINFO.
 */
export async function encodeAudio(format: AudioFormat, source: EncodeSource, opts: EncodeOptions): Promise<EncodedAudio> {
  checkSource(source, opts);
  const stream = encodeInternal(format, source, { ...opts, maxChunkBytes: Infinity, keepWhole: true });
  for await (const _ of stream);
  return { bytes: await stream.wholeFile(), meta: await stream.meta() };
}
