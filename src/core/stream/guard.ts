/**
 * The one guard every streamed answer sends its frames through: T2A server-sent events, chunked
 * platform audio and every WebSocket. It owns what all of them share: the chunk count (and the
 * journal's `chunks`), the `cut_after_chunks` fault, a client that left, the emulator's shutdown at a
 * frame boundary, the journal note of how the stream ended, and finishing the entry once. A transport
 * only says how one frame is written, how its connection is cut and how it ends for shutdown.
 *
 * A new per-chunk behaviour is a step of the guard: one more entry of CHUNK_STEPS (core/stream/chunk-steps.ts)
 * for a step that decides whether a chunk leaves (the cut, shutdown), or a step of `sendAudio` for one that
 * changes the audio. Back-pressure of a transport with a send buffer is core/stream/back-pressure.ts;
 * what one request brings to its guard (`guardStream`) is core/stream/request-guard.ts.
 * When a fault field asks for it, the field itself is one entry of the registry (core/faults/fields.ts):
 * the schema, the client's types, the docs' table, the inspector's form and which carriers take it
 * (`shapeOf`) all read that entry, so the field is that entry plus its behaviour here (and in a
 * sender, for what only it can apply: `audioSource`, `encodedChunks`). The audio of a stream that
 * carries synthesized speech goes through `sendAudio`: there the guard paces it and applies the faults
 * inside the audio (their rules in core/stream/shaping.ts), through the frame's own `render` so it
 * never parses a payload.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RandomStream } from '../state/ids.js';
import type { JournalEntry } from '../journal/journal.js';
import { DeliveryRecord } from '../journal/delivery.js';
import type { FrameKind, StreamEnd, StreamGuardOptions, StreamTransport } from './frames.js';
import { AFTER, BEFORE, NOTES } from './chunk-steps.js';
import { waitForRoom } from './back-pressure.js';
import { sendEncoded, type EncodedFrames } from './encoded.js';
import {
  FIRST_AUDIO_LEAD_MS,
  afterATurn,
  flipBytes,
  isPaced,
  Pacer,
  silenceFrames,
  splitInsideFrames,
  waitUntil,
  withSilence,
  type AudioFrame,
  type AudioShaping,
  type StreamShape,
} from './shaping.js';

export { AudioMade } from './shaping.js';
export type { EncodedFrames } from './encoded.js';
export type { AudioFrame, AudioShaping } from './shaping.js';

export { AUDIO_CHUNK, EVENT_CHUNK, FINAL_AUDIO_CHUNK, FINAL_EVENT_CHUNK } from './frames.js';
export type { FrameKind, StreamEnd, StreamGuardOptions, StreamTransport } from './frames.js';

export class StreamGuard<F> implements AudioShaping {
  /** Chunks that left so far. */
  chunks = 0;
  /** How the stream ended; null while it runs. */
  ended: StreamEnd | null = null;
  readonly cutAt: number | undefined;
  /** The stream's pace and audio faults (empty: none). */
  readonly shape: StreamShape;
  private readonly pacer: Pacer | null;
  /** Audio faults applied so far, for the journal note. */
  private readonly applied: string[] = [];
  private random: RandomStream | null = null;
  private corruptLeft: number;
  private flipped = 0;
  private audioFrames = 0;
  private paceWaited = false;
  private goneAt: number | null = null;
  private cancelledByClient = false;
  /** How long audio went on after the last cancel of an earlier answer (ms). */
  private cutMs: number | null = null;
  private lastAudioAt: number | null = null;
  /** When the current answer's first audio frame left (wall time); null until it did. */
  firstAudioAt: number | null = null;
  /** The delivery figures (first audio, real-time factor, stalls, overrun), on the entry once audio left. */
  private readonly delivery: DeliveryRecord;
  private deliveryShown = false;

  constructor(
    private readonly transport: StreamTransport<F>,
    readonly options: StreamGuardOptions,
  ) {
    this.cutAt = options.cutAfterChunks;
    this.shape = options.shape ?? {};
    this.pacer = isPaced(this.shape) ? new Pacer(this.shape, options.startedAt ?? performance.now(), options.seed ?? '') : null;
    this.corruptLeft = this.shape.corrupt_bytes ?? 0;
    this.delivery = new DeliveryRecord(options.answerFrom ?? options.startedAt ?? performance.now());
    options.gone?.addEventListener(
      'abort',
      () => {
        this.goneAt ??= performance.now();
        this.delivery.cut(this.goneAt);
      },
      { once: true },
    );
  }

  /** Fires when the client is gone (an HTTP answer's guard watches its response for it). */
  get gone(): AbortSignal | undefined {
    return this.options.gone;
  }

  /**
   * A new answer on the same stream (a socket's next piece of text): `ttfa_ms` counts again from now.
   * `evenTheFirst`: the stream's first answer too (a conversation reply counts from its synthesis).
   * `from` (wall time, default now): where its time to first audio is measured from in the journal
   * (the end of the user's utterance for a conversation reply); the pace counts from now.
   */
  beginAnswer(evenTheFirst = false, from?: number): void {
    // A cancelled answer is over: its cut's timing is kept, the next answer's audio is not counted in it.
    if (this.cancelledByClient && this.goneAt !== null) {
      this.cutMs = Math.max(0, Math.round((this.lastAudioAt ?? 0) - this.goneAt));
      this.goneAt = null;
      this.cancelledByClient = false;
    }
    const now = performance.now();
    this.delivery.begin(from ?? now);
    this.pacer?.restart(now, evenTheFirst);
    this.firstAudioAt = null;
  }

  /** The current answer's audio is whole (for a sender whose last frame is not marked final). */
  answerEnded(): void {
    this.delivery.done();
  }

  /** The client cancelled (bidi `task_cancel`): the journal reports how long audio went on after it. */
  cancelled(): void {
    this.cancelledByClient = true;
    this.goneAt ??= performance.now();
    this.delivery.cut(performance.now());
    if (this.pacer || this.applied.length) this.writeNote();
  }

  /**
   * `gap_ms` at `gap_at_ms`: the PCM a sender encodes, with the silence inserted (the sender's
   * encoder then reports the longer duration). The source itself without the fault. A paced stream's
   * synthesis starts a turn later (afterATurn), so streams asked together start their clocks together.
   */
  audioSource(source: AsyncIterable<Int16Array>, sampleRate: number, channels: number): AsyncIterable<Int16Array> {
    const { gap_ms: gap, gap_at_ms: at = 0 } = this.shape;
    if (gap) this.note(`gap_ms=${gap} at ${at} ms`);
    const pcm = gap ? withSilence(source, sampleRate, channels, gap, at) : source;
    return this.pacer ? afterATurn(pcm) : pcm;
  }

  /** Frames of silence `audioSource` adds (a header that states its length up front counts them). */
  addedFrames(sampleRate: number): number {
    return this.shape.gap_ms ? silenceFrames(sampleRate, this.shape.gap_ms) : 0;
  }

  get dropsFinal(): boolean {
    return !!this.shape.drop_final;
  }

  /** `split_frame`: the encoder's chunks with their boundaries moved inside frames; the chunks themselves without it. */
  encodedChunks(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    if (!this.shape.split_frame) return chunks;
    this.note('split_frame=1');
    return splitInsideFrames(chunks);
  }

  /**
   * Sends one frame of synthesized audio: paced (wall time; the client leaving ends the wait at once),
   * then damaged as the audio faults say, then through `send`. A dropped final frame (`drop_final`)
   * answers true: the sender ends the stream cleanly as if it had left. `stop` ends a paced wait for
   * this frame only (a socket's piece cancelled while the socket stays): false, the stream goes on.
   */
  sendAudio(frame: AudioFrame<F>, kind: FrameKind, stop?: AbortSignal): boolean | Promise<boolean> {
    if (this.ended) return false;
    const s = this.shape;
    // The audio frame's own number (a duplicate is not one more frame to `hex_odd`, `duplicate_chunk`).
    const number = ++this.audioFrames;
    if (kind.final && s.drop_final) {
      this.note('drop_final=1');
      return true;
    }
    let audio = frame.audio;
    if (this.corruptLeft > 0 && number > 1 && !kind.final && audio.length) {
      // Spread over some four chunks: a decoder meets damage more than once.
      const budget = Math.min(this.corruptLeft, Math.ceil((s.corrupt_bytes ?? 0) / 4));
      const [damaged, flipped] = flipBytes(audio, budget, (this.random ??= new RandomStream(`corrupt:${this.options.seed ?? ''}`)));
      audio = damaged;
      this.corruptLeft -= flipped;
      this.flipped += flipped;
      if (flipped) this.note(`corrupt_bytes=${this.flipped}`, true);
    }
    const oddHex = s.hex_odd === number && audio.length > 0;
    if (oddHex) this.note(`hex_odd=${number}`);
    const inflate = kind.final && s.extra_info_mismatch ? 1.1 : 1;
    if (inflate !== 1) this.note('extra_info_mismatch=1');
    const rendered = frame.render(audio, { oddHex, inflate });
    const pacer = this.pacer;
    if (!pacer) return this.deliver(rendered, kind, frame.ms, number);
    const lead = pacer.awaitingFirst ? FIRST_AUDIO_LEAD_MS : 0;
    const due = pacer.due();
    if (due <= performance.now()) return this.deliver(rendered, kind, frame.ms, number);
    return this.paced(due, lead, rendered, kind, frame.ms, number, stop);
  }

  /**
   * Sends every chunk an encoder makes as frames of synthesized audio (core/stream/encoded.ts): one call
   * for the whole answer. True once the encoder ended with every frame sent; false once the stream ended.
   */
  sendEncoded(chunks: AsyncIterable<Buffer>, how: EncodedFrames<F> = {}): Promise<boolean> {
    return sendEncoded(this, chunks, how, (frame, kind) => this.sendAudio(frame, kind));
  }

  private async paced(due: number, lead: number, frame: F, kind: FrameKind, ms: number, number: number, stop?: AbortSignal): Promise<boolean> {
    if (!this.paceWaited) {
      this.paceWaited = true;
      this.options.onPaceWait?.();
    }
    const { gone, closing } = this.options;
    if (gone?.aborted) return this.stop('left');
    if (stop?.aborted) return false;
    // The client leaving, the piece cancelled or the emulator shutting down each end the wait at once.
    const signals = [gone, stop, closing].filter((x): x is AbortSignal => x !== undefined);
    try {
      await waitUntil(due, lead, signals.length === 1 ? signals[0] : signals.length ? AbortSignal.any(signals) : undefined);
    } catch {
      if (gone?.aborted) return this.stop('left');
      if (stop?.aborted) return false;
      return this.stop(closing?.aborted ? 'shutdown' : 'left');
    }
    if (this.ended) return false;
    const delivered = await this.deliver(frame, kind, ms, number);
    // The next chunk is made a turn later: other streams' frames due now leave before that work runs.
    if (delivered) await nextTurn();
    return delivered;
  }

  /** Writes an audio frame (twice for `duplicate_chunk`) and tells the pacer it left. */
  private deliver(frame: F, kind: FrameKind, ms: number, number: number): boolean | Promise<boolean> {
    const twice = this.shape.duplicate_chunk === number;
    const first = this.send(frame, kind);
    const after = (ok: boolean): boolean | Promise<boolean> => {
      if (!ok) return false;
      const now = performance.now();
      this.lastAudioAt = now;
      this.firstAudioAt ??= now;
      this.pacer?.sent(ms, now);
      this.delivered(ms, now, kind.final);
      if (this.pacer || this.applied.length) this.writeNote();
      if (!twice) return true;
      this.note(`duplicate_chunk=${number}`);
      return this.send(frame, kind);
    };
    return typeof first === 'boolean' ? after(first) : first.then(after);
  }

  /** The delivery figures count an audio frame that left (the entry shows them from the first). */
  private delivered(ms: number, now: number, final: boolean): void {
    this.delivery.sent(ms, now);
    if (final) this.delivery.done();
    if (!this.deliveryShown && this.options.entry) {
      this.deliveryShown = true;
      this.options.entry.noteDelivery(this.delivery);
    }
  }

  /** Records an audio fault applied (once). */
  private note(what: string, replace = false): void {
    const key = what.split('=')[0]!;
    const at = this.applied.findIndex((a) => a.startsWith(key));
    if (at >= 0) {
      if (replace) this.applied[at] = what;
      return void (replace && this.writeNote());
    }
    this.applied.push(what);
    this.writeNote();
  }

  /** The journal note of the stream's shaping, after how it ended when it did. */
  private writeNote(end?: string): void {
    const entry = this.options.entry;
    if (!entry) return;
    const parts: string[] = end ? [end] : [];
    if (this.pacer) parts.push(this.pacer.describe());
    if (this.applied.length) parts.push(`audio faults: ${this.applied.join(', ')}`);
    const cut = this.goneAt !== null ? Math.max(0, Math.round((this.lastAudioAt ?? 0) - this.goneAt)) : this.cutMs;
    if (cut !== null) parts.push(`last audio ${cut} ms after the client left or cancelled`);
    if (parts.length) entry.setNote(parts.join('; '));
    this.recordFault(entry);
  }

  /** The entry's structured fault: the audio faults applied and a paced first audio (an account's standing faults have no request fault: `account`). */
  private recordFault(entry: JournalEntry): void {
    // The guard's own list (shown as a copy): this runs on every paced frame.
    entry.noteStreamFaults(this.applied, this.pacer?.firstAudioMs ?? undefined);
  }

  /**
   * Sends one frame through the steps. True when it left and the stream goes on; false when the stream
   * has ended (now or before): the caller stops producing. A transport whose writes are synchronous gets
   * a boolean back, never a promise.
   */
  send(frame: F, kind: FrameKind): boolean | Promise<boolean> {
    if (this.ended) return false;
    const full = waitForRoom(this.transport, this.options, () => this.ended);
    if (full) return full.then((verdict) => (verdict ? this.stop(verdict) : this.send(frame, kind)));
    const commit = this.options.durable?.();
    if (commit)
      return commit.then(
        () => this.send(frame, kind),
        () => this.stop('cut'),
      );
    for (const step of BEFORE) {
      const verdict = step(this, kind);
      if (verdict) return this.stop(verdict);
    }
    const written = this.transport.write(frame, kind);
    if (typeof written === 'boolean') return this.afterWrite(written, kind, frame);
    return written.then((ok) => this.afterWrite(ok, kind, frame));
  }

  /**
   * The same steps for a transport that is pulled rather than written to (a Readable body): each frame
   * of `source` is handed on by yielding it, and counts as written once the consumer took it. The
   * transport's `write` is not called. Ends the stream `done` when the source is exhausted.
   */
  async *frames(source: AsyncIterable<F>, kind: FrameKind): AsyncGenerator<F> {
    for await (const frame of source) {
      if (this.ended) return;
      for (const step of BEFORE) {
        const verdict = step(this, kind);
        if (verdict) return void (await this.end(verdict));
      }
      yield frame;
      const goOn = this.afterWrite(true, kind, frame);
      if (goOn !== true && !(await goOn)) return;
    }
    if (!this.ended) await this.end('done');
  }

  /** Ends the stream once: the transport's own action for a cut or a shutdown, the note, the finish. */
  end(how: StreamEnd): void | Promise<void> {
    if (this.ended) return;
    this.ended = how;
    const t = this.transport;
    const action = how === 'cut' ? t.cut() : how === 'shutdown' ? t.endForShutdown() : how === 'stalled' ? t.stalled?.() : undefined;
    if (action) return action.then(() => this.close(how));
    this.close(how);
  }

  private afterWrite(ok: boolean, kind: FrameKind, frame: F): boolean | Promise<boolean> {
    if (this.ended) return false;
    if (!ok) return this.stop('left');
    if (kind.chunk) {
      this.chunks += 1;
      const entry = this.options.entry;
      entry?.countChunk(frame, kind.final);
    }
    for (const step of AFTER) {
      const verdict = step(this, kind);
      if (verdict) return this.stop(verdict);
    }
    return true;
  }

  private stop(how: StreamEnd): false | Promise<false> {
    const ending = this.end(how);
    return ending ? ending.then(() => false as const) : false;
  }

  private close(how: StreamEnd): void {
    const note = NOTES[how];
    if (note) this.options.entry?.setNote(note(this.chunks));
    if (how === 'cut') this.options.entry?.noteCut(this.chunks);
    // Our own cut or a shutdown aborts the same signal: only a client that left or cancelled is timed.
    if (how !== 'left' && !this.cancelledByClient) {
      this.goneAt = null;
      this.delivery.uncut();
    }
    if (how === 'done') this.delivery.done();
    // An unshaped stream keeps its plain note; a paced one says how long audio went on after the cut.
    if (this.pacer || this.applied.length) this.writeNote(note?.(this.chunks));
    if (how === 'left') this.options.logger?.debug('client left before the end of the stream');
    if (how === 'cut' || how === 'left' || how === 'stalled') this.options.finish?.();
    this.options.onEnd?.(how, this.chunks);
  }
}
