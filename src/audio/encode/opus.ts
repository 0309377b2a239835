/**
 * Ogg/Opus writer: libopus (the `opusscript` WebAssembly build, libopus 1.4) for the packets, our
 * own Ogg pages (./ogg.ts) around them, as RFC 7845 and the emulator's packaging rule say:
 * - page 0 holds only OpusHead (BOS, granule 0; pre-skip = the encoder's lookahead, input rate = the
 *   requested rate, gain 0, mapping family 0), page 1 only OpusTags (vendor, `ENCODER=<name version>`);
 * - audio pages hold whole packets, at most `framesPerPage` of them (default 10: 200 ms); a page's
 *   granule counts every 48 kHz sample its packets decode to (pre-skip included), and the last page
 *   (EOS) says pre-skip + the exact input length, so decoders drop the padding of the last frame;
 * - 20 ms frames, application AUDIO, signal MUSIC, CBR at 32,000 bit/s per channel.
 * The library is loaded on the first Opus stream (synchronously: its WebAssembly is compiled from
 * the package's own file); when it cannot be, `opusEncoderProblem()` says why and nothing is encoded.
 */
import { loadOpusNative, OpusCodec, type NativeModule } from '../opus-native.js';
import { VERSION } from '../../version.js';
import { OGG_BOS, OGG_EOS, oggPage } from './ogg.js';

/** Input rates libopus encodes at. */
export const OPUS_INPUT_RATES = [8000, 12000, 16000, 24000, 48000] as const;
/** The encoder's lookahead in 48 kHz samples (Fs/400 + Fs/250 at any input rate, application AUDIO). */
export const OPUS_PRE_SKIP = 312;
export const OPUS_BITRATE_PER_CHANNEL = 32_000;
export const OPUS_FRAMES_PER_PAGE = 10;
const FRAME_MS = 20;
const SAMPLES_48K_PER_FRAME = 48 * FRAME_MS;
const SET_BITRATE = 4002;
const SET_VBR = 4006;
const SET_SIGNAL = 4024;
const SIGNAL_MUSIC = 3002;
const VENDOR = 'libopus 1.4 (opusscript)';
export const OPUS_ENCODER_TAG = `ENCODER=speech-emulator ${VERSION}`;

type Library = { ok: true; native: NativeModule } | { ok: false; problem: string };
let library: Library | null = null;

/** Loads the library with `requireFn` (Node's require; a test gives a failing one) and tries it once. */
export function loadOpusLibrary(requireFn?: (id: string) => unknown): Library {
  try {
    const native = loadOpusNative(requireFn);
    // Makes one encoder, so a broken build is found here rather than mid-stream.
    new OpusCodec(48000, 1, native).free();
    return { ok: true, native };
  } catch (err) {
    return { ok: false, problem: `the Opus encoder (npm package opusscript) could not be loaded: ${(err as Error).message}` };
  }
}

function load(): Library {
  library ??= loadOpusLibrary();
  return library;
}

/** Null when Opus can be encoded; else why not (the encoder that is missing, and its error). */
export function opusEncoderProblem(): string | null {
  const lib = load();
  return lib.ok ? null : lib.problem;
}

/** OpusHead (RFC 7845 section 5.1). */
function opusHead(channels: number, inputRate: number): Buffer {
  const h = Buffer.alloc(19);
  h.write('OpusHead', 0, 'ascii');
  h[8] = 1; // version
  h[9] = channels;
  h.writeUInt16LE(OPUS_PRE_SKIP, 10);
  h.writeUInt32LE(inputRate, 12);
  h.writeInt16LE(0, 16); // output gain
  h[18] = 0; // mapping family 0: mono or stereo, no table
  return h;
}

/** OpusTags (RFC 7845 section 5.2): the vendor string and one comment. */
function opusTags(): Buffer {
  const vendor = Buffer.from(VENDOR, 'utf8');
  const tag = Buffer.from(OPUS_ENCODER_TAG, 'utf8');
  const t = Buffer.alloc(8 + 4 + vendor.length + 4 + 4 + tag.length);
  let at = t.write('OpusTags', 0, 'ascii');
  at = t.writeUInt32LE(vendor.length, at);
  at += vendor.copy(t, at);
  at = t.writeUInt32LE(1, at);
  at = t.writeUInt32LE(tag.length, at);
  tag.copy(t, at);
  return t;
}

export interface OpusWriter {
  /** The two header pages (OpusHead, OpusTags). */
  readonly header: Buffer;
  /** Feeds interleaved PCM at the writer's rate; returns the audio pages it completed. */
  push(pcm: Int16Array): Buffer[];
  /** Pads and encodes what is left, then the last page (EOS with the exact granule). */
  end(): Buffer[];
  /** Input sample frames received so far. */
  readonly frames: number;
  /** Frees the encoder (done by `end()`; needed only when a stream is abandoned). */
  close(): void;
}

export interface OpusWriterOptions {
  sampleRate: number;
  channels: 1 | 2;
  /** The stream's serial number (from the seeded id stream of the caller). */
  serial: number;
  framesPerPage?: number;
}

export function opusWriter(o: OpusWriterOptions): OpusWriter {
  const lib = load();
  if (!lib.ok) throw new Error(lib.problem);
  if (!(OPUS_INPUT_RATES as readonly number[]).includes(o.sampleRate))
    throw new RangeError(`Opus encodes at ${OPUS_INPUT_RATES.join(', ')} Hz, not ${o.sampleRate}`);
  const ch = o.channels;
  const perPage = Math.max(1, Math.min(o.framesPerPage ?? OPUS_FRAMES_PER_PAGE, 50));
  const frameSize = (o.sampleRate * FRAME_MS) / 1000;
  const enc = new OpusCodec(o.sampleRate, ch, lib.native);
  enc.encoderCtl(SET_VBR, 0);
  enc.encoderCtl(SET_BITRATE, OPUS_BITRATE_PER_CHANNEL * ch);
  // The engine renders tones, not speech: the MUSIC hint keeps libopus in CELT, which keeps their
  // waveform (at 24 kHz mono SILK/hybrid would blur the signature's tones beyond recognition).
  enc.encoderCtl(SET_SIGNAL, SIGNAL_MUSIC);
  let sequence = 0;
  const page = (packets: Buffer[], granule: bigint, flags: number) => oggPage({ serial: o.serial, sequence: sequence++, granule, flags, packets });
  const header = Buffer.concat([page([opusHead(ch, o.sampleRate)], 0n, OGG_BOS), page([opusTags()], 0n, 0)]);

  const frameSamples = frameSize * ch;
  const pending = new Int16Array(frameSamples);
  // Host byte order is little-endian on every platform Node runs on: the bytes are s16le.
  const pendingBytes = Buffer.from(pending.buffer);
  let filled = 0;
  let frames = 0;
  let packetCount = 0;
  let open: Buffer[] = [];
  let closed = false;
  let freed = false;
  const free = () => {
    if (!freed) enc.free();
    freed = true;
  };

  const encodeFrame = (): Buffer[] => {
    open.push(enc.encode(pendingBytes, frameSize));
    packetCount++;
    filled = 0;
    if (open.length < perPage) return [];
    const full = page(open, BigInt(packetCount * SAMPLES_48K_PER_FRAME), 0);
    open = [];
    return [full];
  };

  return {
    header,
    get frames() {
      return frames;
    },
    push(pcm) {
      if (closed) throw new Error('the Opus stream has ended');
      frames += pcm.length / ch;
      const out: Buffer[] = [];
      for (let at = 0; at < pcm.length;) {
        const take = Math.min(frameSamples - filled, pcm.length - at);
        pending.set(pcm.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === frameSamples) out.push(...encodeFrame());
      }
      return out;
    },
    end() {
      if (closed) return [];
      closed = true;
      // Enough packets to decode the whole input after the pre-skip; silence pads the last one.
      const exact48k = Math.round((frames * 48000) / o.sampleRate);
      const needed = Math.ceil((exact48k + OPUS_PRE_SKIP) / SAMPLES_48K_PER_FRAME);
      const out: Buffer[] = [];
      while (packetCount < needed) {
        pending.fill(0, filled);
        open.push(enc.encode(pendingBytes, frameSize));
        packetCount++;
        filled = 0;
        if (open.length === perPage && packetCount < needed) {
          out.push(page(open, BigInt(packetCount * SAMPLES_48K_PER_FRAME), 0));
          open = [];
        }
      }
      free();
      out.push(page(open, BigInt(OPUS_PRE_SKIP + exact48k), OGG_EOS));
      return out;
    },
    close: () => free(),
  };
}
