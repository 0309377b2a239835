/**
 * What the journal entry of a bidirectional socket shows (rule E22): the settings it ran with, every
 * frame (in and out, audio as its byte count), every cut of the buffer and every timer that fired.
 * Bounded, so an endless session cannot grow it without limit.
 */
import type { Cut } from './cuts.js';

const MAX_RECORDS = 10_000;

export interface FrameRecord {
  dir: 'in' | 'out';
  event: string;
  at_ms: number;
  code?: number;
  sentence?: number;
  is_final?: boolean;
  audio_bytes?: number;
  /** Why an incoming frame changed nothing (`ignored after task_finish`, `whitespace only`). */
  note?: string;
}

export interface CutRecord {
  at_ms: number;
  reason: Cut['reason'];
  text: string;
  /** The sentence number it became, or null when it had nothing to pronounce. */
  sentence: number | null;
}

export interface TimerRecord {
  at_ms: number;
  timer: 'silence' | 'backstop' | 'idle';
  /** Sentences the firing cut. */
  cuts: number;
}

export class BidiJournal {
  readonly record: {
    connect_id: string;
    settings: object;
    frames: FrameRecord[];
    frames_total: number;
    cuts: CutRecord[];
    timers: TimerRecord[];
    /** Records not kept once the bound was reached. */
    dropped: number;
  };

  constructor(connectId: string, settings: object) {
    this.record = { connect_id: connectId, settings, frames: [], frames_total: 0, cuts: [], timers: [], dropped: 0 };
  }

  frame(frame: FrameRecord): void {
    this.record.frames_total++;
    this.keep(this.record.frames, frame);
  }

  cut(atMs: number, cut: Cut, sentence: number | null): void {
    this.keep(this.record.cuts, { at_ms: atMs, reason: cut.reason, text: cut.text, sentence });
  }

  timer(atMs: number, timer: TimerRecord['timer'], cuts: number): void {
    this.keep(this.record.timers, { at_ms: atMs, timer, cuts });
  }

  private keep<T>(list: T[], item: T): void {
    if (this.record.frames.length + this.record.cuts.length + this.record.timers.length >= MAX_RECORDS) this.record.dropped++;
    else list.push(item);
  }
}
