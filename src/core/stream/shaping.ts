/**
 * How a stream of synthesized audio is shaped on its way out: its pace (`ttfa_ms`, `rtf`, `jitter_ms`,
 * `stall_ms` at `stall_at_ms`, in wall time: pacing is about delivery, not the emulator clock) and the
 * damage its audio carries (`drop_final`, `duplicate_chunk`, `hex_odd`, `split_frame`, `gap_ms` at
 * `gap_at_ms`, `corrupt_bytes`, `extra_info_mismatch`). The stream guard (core/stream/guard.ts) owns
 * every decision; this file holds the pieces it decides with: the shape read from the request's fault
 * (or the latency profile), the pacer, and the byte-level helpers a sender applies where only it can
 * (silence into the PCM before encoding, chunk boundaries inside frames).
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { FaultDirective, StreamShape } from '../faults/faults.js';
import { RandomStream } from '../state/ids.js';
import { takeFault } from '../http/request-context.js';

/**
 * One frame of synthesized audio, as its sender hands it to the guard: the audio bytes apart from
 * the payload, so the guard can damage them without reading the protocol, and how the payload is
 * made of them.
 */
export interface AudioFrame<F> {
  /** The audio it carries (empty for a final message without audio). */
  readonly audio: Buffer;
  /** Milliseconds of new audio in it (what pacing counts); 0 for a final message repeating earlier audio. */
  readonly ms: number;
  /**
   * The frame itself. `oddHex`: write the audio's hex without its last character (`hex_odd`).
   * `inflate`: the final `extra_info` claims this many times its duration and size (`extra_info_mismatch`).
   */
  render(audio: Buffer, damage: { oddHex: boolean; inflate: number }): F;
}

/** What a sender asks of the guard where only the sender can apply a fault: before and after encoding. */
export interface AudioShaping {
  /** `gap_ms`: the PCM with its silence inserted. */
  audioSource(source: AsyncIterable<Int16Array>, sampleRate: number, channels: number): AsyncIterable<Int16Array>;
  /** Frames of silence `audioSource` adds. */
  addedFrames(sampleRate: number): number;
  /** `split_frame`: the encoded chunks with boundaries inside frames. */
  encodedChunks(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer>;
  /** `drop_final`: a socket also keeps back its closing event (`task_finished`) and just closes. */
  readonly dropsFinal: boolean;
}

/**
 * How much audio a sender has made so far, counted in the sample frames its PCM hands the encoder, and
 * how much of it each frame sent carries that an earlier one did not (the `ms` pacing counts).
 */
export class AudioMade {
  private frames = 0;
  private sentMs = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly channels: number,
  ) {}

  /** The same blocks, counting the sample frames handed on. */
  counting(source: AsyncIterable<Int16Array>): AsyncIterable<Int16Array> {
    return { [Symbol.asyncIterator]: () => this.count(source) };
  }

  private async *count(source: AsyncIterable<Int16Array>): AsyncGenerator<Int16Array> {
    for await (const block of source) {
      this.frames += block.length / this.channels;
      yield block;
    }
  }

  /** Milliseconds of audio made so far. */
  get ms(): number {
    return (this.frames * 1000) / this.sampleRate;
  }

  /** The new audio of a frame that carries what was made up to `upToMs` (0 when none is new). */
  newMs(upToMs: number): number {
    const ms = Math.max(0, upToMs - this.sentMs);
    this.sentMs = Math.max(this.sentMs, upToMs);
    return ms;
  }
}

/** A stream's pace and audio faults, declared with the fault schema (core/faults/faults.ts). */
export type { StreamShape };

export const PACE_FIELDS = ['ttfa_ms', 'rtf', 'jitter_ms', 'stall_ms', 'stall_at_ms'] as const;
export const AUDIO_FAULT_FIELDS = [
  'drop_final',
  'duplicate_chunk',
  'hex_odd',
  'split_frame',
  'gap_ms',
  'gap_at_ms',
  'corrupt_bytes',
  'extra_info_mismatch',
] as const;

/**
 * `--latency realistic`: the pace of every audio stream. The specifications give no figures for
 * streamed delivery; these are the emulator's (docs/voice-agents.md says so): a first audio after
 * 350 ms (the conversation sockets' figure), delivery at twice real time, ±20 ms of jitter.
 */
export const REALISTIC_PACE: StreamShape = Object.freeze({ ttfa_ms: 350, rtf: 2, jitter_ms: 20 });

/** Faults of a protocol with hex audio and a final event: a raw audio body has neither (reported ignored). */
const HEX_ONLY = new Set<string>(['hex_odd', 'drop_final', 'extra_info_mismatch']);

/** Where a stream's sender can apply faults: `hex` transports carry audio as hex text (T2A, speech sockets). */
export type AudioCarrier = 'hex' | 'binary';

/**
 * The shape of one request's stream: the fault's fields (taken, so they are not reported ignored),
 * over the account's pace, over the latency profile. A raw audio body leaves HEX_ONLY's fields untaken.
 */
export function shapeOf(req: FastifyRequest, carrier: AudioCarrier, base: StreamShape | undefined): StreamShape {
  const shape: Record<string, number> = { ...base };
  const fields = carrier === 'hex' ? [...PACE_FIELDS, ...AUDIO_FAULT_FIELDS] : [...PACE_FIELDS, ...AUDIO_FAULT_FIELDS.filter((f) => !HEX_ONLY.has(f))];
  if (!req.ctx?.fault) return shape;
  for (const field of fields) {
    const value = takeFault(req, field as keyof FaultDirective);
    if (value !== undefined) shape[field] = value;
  }
  return shape;
}

/** True when the shape paces delivery at all. */
export function isPaced(shape: StreamShape): boolean {
  return !!(shape.ttfa_ms || shape.rtf || shape.jitter_ms || shape.stall_ms);
}

/**
 * When each audio frame may leave. The first no sooner than `ttfa_ms` after the answer began (the
 * request arrived, or a socket's piece of text did); each later one no sooner than the audio sent
 * before it would take to play at `rtf` (seconds of audio per wall second) counted from the first;
 * one `stall_ms` pause once `stall_at_ms` of audio left; a seeded `±jitter_ms` on each, never moving
 * a frame before the one ahead of it.
 */
export class Pacer {
  private startedAt: number;
  private firstAt: number | null = null;
  private sentMs = 0;
  private stalled = false;
  private lastDue = 0;
  private stallExtra = 0;
  /** The first audio's delay after the answer began (ms), for the journal. */
  firstAudioMs: number | null = null;
  /** Wall time the last audio frame left. */
  lastSentAt: number | null = null;
  private readonly random: RandomStream;

  constructor(
    readonly shape: StreamShape,
    startedAt: number,
    seed: string,
  ) {
    this.startedAt = startedAt;
    this.random = new RandomStream(`pace:${seed}`);
  }

  /**
   * A new answer on the same stream (a socket's next piece): its first audio waits `ttfa_ms` again.
   * `evenTheFirst`: the first answer too counts from `at` (a conversation reply, whose synthesis starts
   * after recognition and the language model), not from when the stream began.
   */
  restart(at: number, evenTheFirst = false): void {
    // The first answer counts from when the stream began (a socket's upgrade), not from its text.
    if (this.firstAt === null && !evenTheFirst) return;
    this.startedAt = at;
    this.firstAt = null;
    this.sentMs = 0;
    this.stalled = false;
    this.stallExtra = 0;
  }

  /** True until the answer's first audio left: its wait gets the precise finish (FIRST_AUDIO_LEAD_MS). */
  get awaitingFirst(): boolean {
    return this.firstAt === null;
  }

  /** The wall time (performance.now) before which the next audio frame must not leave. */
  due(): number {
    const s = this.shape;
    let due: number;
    if (this.firstAt === null) {
      due = this.startedAt + (s.ttfa_ms ?? 0);
      // The first audio never comes before ttfa_ms: its jitter only delays it.
      if (s.jitter_ms) due += this.random.next() * s.jitter_ms;
    } else {
      due = this.firstAt + (s.rtf ? this.sentMs / s.rtf : 0);
      if (s.jitter_ms) due += (this.random.next() * 2 - 1) * s.jitter_ms;
    }
    if (s.stall_ms && !this.stalled && this.sentMs >= (s.stall_at_ms ?? 0)) {
      this.stalled = true;
      this.stallExtra += s.stall_ms;
    }
    due += this.stallExtra;
    due = Math.max(due, this.lastDue);
    this.lastDue = due;
    return due;
  }

  /** An audio frame carrying `ms` of audio left at `now`. */
  sent(ms: number, now: number): void {
    if (this.firstAt === null) {
      this.firstAt = now;
      this.firstAudioMs ??= Math.round(now - this.startedAt);
    }
    this.sentMs += ms;
    this.lastSentAt = now;
  }

  /** What the journal says of the pace: asked, and what it came to. */
  describe(): string {
    const s = this.shape;
    const asked = PACE_FIELDS.filter((f) => s[f] !== undefined)
      .map((f) => `${f}=${s[f]}`)
      .join(' ');
    const took = this.firstAt !== null && this.lastSentAt !== null ? this.lastSentAt - this.firstAt : 0;
    const first = this.firstAudioMs === null ? 'no audio sent' : `first audio after ${this.firstAudioMs} ms`;
    return `paced ${asked}: ${first}, ${Math.round(this.sentMs)} ms of audio over ${Math.round(took)} ms`;
  }
}

/**
 * How long before its due time a first audio's timer is set: the last stretch is finished by turns of
 * the event loop, so the first audio leaves on time (not a timer's slack late) and never early.
 */
export const FIRST_AUDIO_LEAD_MS = 2;

/**
 * Waits until `due` (performance.now). Node's timers count whole milliseconds and may fire a fraction
 * early: a timer covers the wait up to `lead` ms before `due`, turns of the event loop (which keep
 * serving other work) cover the rest, so nothing leaves before `due`. Rejects when `signal` aborts.
 */
export async function waitUntil(due: number, lead: number, signal?: AbortSignal): Promise<void> {
  const options = signal ? { signal } : undefined;
  for (;;) {
    const left = due - performance.now();
    if (left <= 0) return;
    if (left > lead + 1) await sleep(left - lead, undefined, options);
    else await nextTurn(undefined, options);
  }
}

/**
 * The PCM of a paced stream, its first block made one turn of the event loop later: requests that
 * arrived together with this one are read (their `ttfa_ms` starts counting) before this synthesis
 * runs, rather than after it. The pace's own wait covers the synthesis.
 */
export async function* afterATurn<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  await nextTurn();
  yield* source;
}

/**
 * `gap_ms` at `gap_at_ms`: digital silence inserted into interleaved 16-bit PCM before it is encoded,
 * so every format stays a valid stream and its reported duration grows with it.
 */
export async function* withSilence(
  source: AsyncIterable<Int16Array>,
  sampleRate: number,
  channels: number,
  gapMs: number,
  atMs: number,
): AsyncGenerator<Int16Array> {
  const atFrame = Math.round((atMs * sampleRate) / 1000);
  let gapFrames = silenceFrames(sampleRate, gapMs);
  let frames = 0;
  const silence = function* () {
    while (gapFrames > 0) {
      const n = Math.min(gapFrames, 4096);
      gapFrames -= n;
      yield new Int16Array(n * channels);
    }
  };
  for await (const block of source) {
    const n = block.length / channels;
    if (gapFrames > 0 && frames + n >= atFrame) {
      const cut = (atFrame - frames) * channels;
      if (cut > 0) yield block.subarray(0, cut);
      yield* silence();
      if (cut < block.length) yield block.subarray(cut);
    } else yield block;
    frames += n;
  }
  // Audio shorter than gap_at_ms: the silence ends it.
  yield* silence();
}

/** Frames of silence `gap_ms` stands for. */
export function silenceFrames(sampleRate: number, gapMs: number): number {
  return Math.round((gapMs * sampleRate) / 1000);
}

/**
 * Bytes each chunk hands on to the next under `split_frame`: fewer than the smallest frame of any
 * format (MP3 and Opus frames are longer; odd, it splits a PCM sample), so every boundary moves from
 * between two frames to inside one.
 */
export const SPLIT_CARRY = 7;

/** `split_frame=1`: the same bytes, each boundary moved SPLIT_CARRY bytes back into the frame before it. */
export async function* splitInsideFrames(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let carry: Buffer | null = null;
  for await (const chunk of chunks) {
    const joined: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    if (joined.length <= SPLIT_CARRY) {
      carry = joined;
      continue;
    }
    yield joined.subarray(0, joined.length - SPLIT_CARRY);
    carry = joined.subarray(joined.length - SPLIT_CARRY);
  }
  if (carry?.length) yield carry;
}

/**
 * `corrupt_bytes`: flips up to `count` seeded bytes of `audio` (a copy), sparing what a decoder needs
 * to find its way: 0xFF bytes and the header bytes after one (MP3/FLAC frame syncs), Ogg page headers,
 * and never writing a new 0xFF. Returns the damaged copy and how many bytes it flipped.
 */
export function flipBytes(audio: Buffer, count: number, random: RandomStream): [Buffer, number] {
  if (count <= 0 || audio.length === 0) return [audio, 0];
  const out = Buffer.from(audio);
  const spared = sparedBytes(audio);
  let flipped = 0;
  for (let tries = 0; flipped < count && tries < count * 20; tries++) {
    const i = Math.floor(random.next() * out.length);
    if (spared[i]) continue;
    let v = out[i]! ^ 0x5a;
    if (v === 0xff) v = out[i]! ^ 0x0f;
    out[i] = v;
    spared[i] = 1;
    flipped++;
  }
  return [out, flipped];
}

function sparedBytes(audio: Buffer): Uint8Array {
  const spared = new Uint8Array(audio.length);
  const spare = (from: number, n: number) => spared.fill(1, from, Math.min(audio.length, from + n));
  for (let i = 0; i < audio.length; i++) {
    if (audio[i] === 0xff) spare(i, 6);
    // "OggS": a page header and its segment table (at most 27 + 255 bytes).
    if (audio[i] === 0x4f && audio[i + 1] === 0x67 && audio[i + 2] === 0x67 && audio[i + 3] === 0x53) spare(i, 282);
  }
  // Never make a byte into a sync's first byte's neighbour: bytes before a 0xFF stay too.
  for (let i = 1; i < audio.length; i++) if (audio[i] === 0xff) spared[i - 1] = 1;
  return spared;
}
