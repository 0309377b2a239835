/**
 * A server-sent event stream of synthesized audio (T2A), described to core once. The service says what
 * its events are (how a chunk of audio is rendered, what is sent when the emulator shuts down or the
 * stream fails) and core does the rest: the stream guard and its SSE writes, the samples counted for the
 * pace, the head, every chunk's pace, faults, count and journal note, and how the stream ends.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FINAL_AUDIO_CHUNK, type StreamGuard } from './guard.js';
import { guardStream } from './request-guard.js';
import type { EncodedFrames } from './encoded.js';
import type { StreamEnd } from './frames.js';
import { openEventStream } from './http.js';
import { AudioMade, type AudioFrame } from './shaping.js';

/** What the stream reads of the emulator instance (core/emulator.ts has all of it). */
export interface EventStreamHost {
  readonly closing: AbortSignal;
  readonly logger: { debug(msg: string): void; error(obj: object, msg: string): void };
  readonly config: { readonly latency: 'none' | 'realistic' };
  persist(): Promise<void>;
}

/** A stream of synthesized audio as its service describes it. */
export interface AudioEventStreamDescription {
  traceId: string;
  /** The work behind the stream: core aborts it when the stream is cut or ends for shutdown; its signal is the client leaving. */
  work: AbortController;
  /** The synthesized samples, their rate and channels: the stream's `pcm` is what the encoder reads. */
  source: AsyncIterable<Int16Array>;
  sampleRate: number;
  channels: number;
  /** The event that ends the stream cleanly when the emulator shuts down. */
  shutdownEvent: string;
  /** Told once, before the first paced wait (the service frees its synthesis slot). */
  onPaceWait?: () => void;
  /** Told once, however the stream ended. */
  onEnd?: (end: StreamEnd, chunks: number) => void;
}

/**
 * Writes one event and resolves once its bytes were handed to the socket; false when the client is
 * gone. One close listener serves the whole stream (a write waits for one event at a time).
 */
function eventWriter(res: ServerResponse): (text: string) => Promise<boolean> {
  let pending: ((ok: boolean) => void) | null = null;
  res.once('close', () => pending?.(false));
  return (text) =>
    new Promise((resolve) => {
      if (res.destroyed || res.writableEnded) return resolve(false);
      pending = resolve;
      res.write(text, (err) => {
        pending = null;
        resolve(!err);
      });
    });
}

export class AudioEventStream {
  readonly guard: StreamGuard<string>;
  /** The samples the encoder reads: with the guard's audio faults (`gap_ms`), counted for the pace. */
  readonly pcm: AsyncIterable<Int16Array>;
  private readonly made: AudioMade;
  private readonly res: ServerResponse;
  private readonly write: (text: string) => Promise<boolean>;

  constructor(
    private readonly emu: EventStreamHost,
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly d: AudioEventStreamDescription,
  ) {
    const res = (this.res = reply.raw);
    const write = (this.write = eventWriter(res));
    const work = d.work;
    // The guard paces the audio and applies the faults inside it (core/stream/guard.ts).
    this.guard = guardStream<string>(
      req,
      {
        write,
        cut: () => {
          work.abort(new Error('connection cut by fault'));
          res.socket?.destroy();
        },
        // A final error event, then a clean end of the body (never a cut mid-event).
        endForShutdown: async () => {
          work.abort(new Error('emulator shutting down'));
          await write(d.shutdownEvent);
          res.end();
        },
      },
      {
        status: 200,
        closing: emu.closing,
        logger: emu.logger,
        onEnd: d.onEnd,
        carrier: 'hex',
        latency: emu.config.latency,
        gone: work.signal,
        startedAt: performance.now() - reply.elapsedTime,
        onPaceWait: d.onPaceWait,
      },
    );
    this.made = new AudioMade(d.sampleRate, d.channels);
    this.pcm = this.made.counting(this.guard.audioSource(d.source, d.sampleRate, d.channels));
  }

  /** Frames of silence the guard adds to `pcm` (a header that states its length up front counts them). */
  get addedFrames(): number {
    return this.guard.addedFrames(this.d.sampleRate);
  }

  /** The head leaves, after what the request changed is on disk (core/stream/http.ts `openEventStream`). */
  async open(): Promise<void> {
    await openEventStream(this.emu, this.req, this.reply, { contentType: 'text/event-stream', traceId: this.d.traceId });
  }

  /**
   * Every chunk of the encoder as one event, `render` making each: true once the encoder ended with every
   * event sent, false once the stream ended (the client left, a cut, shutdown).
   */
  send(encoded: AsyncIterable<Buffer>, how: Omit<EncodedFrames<string>, 'made' | 'bitrate'>): Promise<boolean> {
    return this.guard.sendEncoded(encoded, { ...how, made: this.made });
  }

  /** The last event (the guard may keep it back, `drop_final`), then the body's clean end. */
  async finish(final: AudioFrame<string>): Promise<void> {
    if (!(await this.guard.sendAudio(final, FINAL_AUDIO_CHUNK))) return;
    void this.guard.end('done');
    this.res.end();
  }

  /**
   * The stream stopped on an error. With the connection gone (a client that left, a cut, shutdown) that
   * is routine: the stream ends `left` if nothing ended it yet. Otherwise it is logged, and `event` ends
   * the body.
   */
  async failed(err: unknown, logLine: string, event: string): Promise<void> {
    const guard = this.guard;
    if (guard.ended) return;
    if (this.d.work.signal.aborted || this.res.destroyed) return void guard.end('left');
    this.emu.logger.error({ err }, logLine);
    void guard.end('failed');
    await this.write(event);
    this.res.end();
  }
}
