/**
 * The bot's track as a live audio track runs: one Opus packet every 20 ms of wall time from the moment
 * the user's media connects until the room ends, the bot's frames when it speaks and silence between
 * (as an agent's audio source feeds its track), sent in groups of SEND_EVERY_MS. Frames the bot hands over wait in a short queue: a new
 * stretch of speech starts once LEAD_MS of it is queued, so the bot's own pacing jitter (the stream
 * guard's, or a busy event loop) does not reach the receiver as gaps; a stall longer than the lead
 * (the `stall_ms` fault) does, as it would from a real agent.
 */
import { performance } from 'node:perf_hooks';
import { OpusCodec } from '../../../audio/opus-native.js';

export const FRAME_MS = 20;
export const FRAME_SAMPLES = 960;
/** How much of a stretch of the bot's speech is queued before it starts to play. */
export const LEAD_MS = 200;
/** Frames queued at most (10 s); older ones go first. */
const MAX_QUEUE = 500;
/**
 * Packets leave in groups of this many milliseconds, each with its own RTP time: the receiver's jitter
 * buffer settles on a delay that covers the group, so a busy emulator's late timer (up to about this
 * long) is absorbed instead of heard as a gap or a time-stretch.
 */
export const SEND_EVERY_MS = 100;

export interface RtpTiming {
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
}

export class TrackClock {
  private readonly queue: Int16Array[] = [];
  private readonly encoder = new OpusCodec(48000, 1);
  private readonly silence: Buffer;
  private timer: NodeJS.Timeout | null = null;
  private startedAt = 0;
  private ticks = 0;
  private sequence = 0;
  private speaking = false;
  private stopped = false;

  constructor(private readonly send: (packet: Buffer, rtp: RtpTiming) => void) {
    this.silence = this.encoder.encode(new Uint8Array(FRAME_SAMPLES * 2), FRAME_SAMPLES);
  }

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.startedAt = performance.now();
    this.schedule();
  }

  /** A frame of the bot's speech (48 kHz mono, 960 samples). */
  push(frame: Int16Array): void {
    if (this.stopped) return;
    if (this.queue.length >= MAX_QUEUE) this.queue.shift();
    this.queue.push(frame);
  }

  /** Frames not yet played (a barge-in empties the bot's side; what is queued here still plays). */
  get queuedMs(): number {
    return this.queue.length * FRAME_MS;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
    this.encoder.free();
  }

  private schedule(): void {
    const due = this.startedAt + (this.ticks + SEND_EVERY_MS / FRAME_MS) * FRAME_MS;
    this.timer = setTimeout(() => this.tick(), Math.max(0, due - performance.now()));
  }

  private tick(): void {
    if (this.stopped) return;
    // Late ticks (a busy event loop) catch up: every 20 ms of wall time gets its packet.
    const due = Math.floor((performance.now() - this.startedAt) / FRAME_MS);
    while (this.ticks < due) this.playOne();
    this.schedule();
  }

  private playOne(): void {
    this.ticks++;
    if (!this.speaking && this.queue.length * FRAME_MS >= LEAD_MS) this.speaking = true;
    let packet = this.silence;
    let marker = false;
    if (this.speaking) {
      const frame = this.queue.shift();
      if (frame) {
        marker = this.sequence === 0;
        packet = this.encoder.encode(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength), frame.length);
      } else {
        this.speaking = false;
      }
    }
    this.sequence = (this.sequence + 1) & 0xffff;
    this.send(packet, { sequenceNumber: this.sequence, timestamp: (this.ticks * FRAME_SAMPLES) >>> 0, marker });
  }
}
