/**
 * The delivery figures of a stream of synthesized audio, as its journal entry carries them: per answer
 * (a turn: the request's answer, or one answer of a socket) the time to first audio, the real-time
 * factor it was delivered at, the stalls a listener would have heard and, for an answer the client left
 * or cancelled, the audio sent after the cut (overrun) and the time it took to stop. The stream guard
 * (core/stream/guard.ts) feeds it as audio frames leave, in wall time (performance.now): delivery is
 * about what a listener hears, not the emulator clock.
 */

/**
 * A gap in playback shorter than this is not counted as a stall (a frame a timer's slack late);
 * it still moves the playhead, so small delays never add up to a false stall.
 */
export const STALL_MIN_MS = 20;

/** Turns an entry keeps (a long call keeps its first ones; `turns_total` counts all). */
export const MAX_TURNS = 100;

/** One answer's figures, as the journal shows them. */
export interface TurnFigures {
  /** From the start of the answer (the request, the text piece, or the end of the user's utterance) to its first audio; null when none left. */
  first_audio_ms: number | null;
  /** Milliseconds of audio sent. */
  audio_ms: number;
  /** Audio delivered per wall second, from the first frame to the last (null with fewer than two frames). */
  rtf: number | null;
  /** Gaps of at least STALL_MIN_MS a listener playing from the first frame would have heard. */
  stalls: number;
  /** Their total length. */
  gap_ms: number;
  /** The client left or cancelled this answer: audio sent after that (ms of audio)… */
  overrun_ms?: number;
  /** …and how long after it the last audio left (0: none left after it). */
  stop_ms?: number;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

class Turn {
  firstAt: number | null = null;
  lastAt = 0;
  audioMs = 0;
  lastFrameMs = 0;
  /** Wall time, after firstAt, at which playback of the audio sent so far ends (gaps included). */
  playEnd = 0;
  stalls = 0;
  gapMs = 0;
  cutAt: number | null = null;
  /** The answer's audio is whole (its final frame left): a client leaving later cut nothing. */
  complete = false;
  overrunMs = 0;
  lastAfterCut: number | null = null;

  constructor(readonly startedAt: number) {}

  sent(ms: number, at: number): void {
    if (this.firstAt === null) {
      this.firstAt = at;
      this.playEnd = at;
    }
    // A listener plays from the first frame on: a frame that comes after the audio before it ran out is a gap.
    const gap = at - this.playEnd;
    if (gap > 0) {
      this.playEnd = at;
      if (gap >= STALL_MIN_MS) {
        this.stalls++;
        this.gapMs += gap;
      }
    }
    this.playEnd += ms;
    this.audioMs += ms;
    this.lastFrameMs = ms;
    this.lastAt = at;
    if (this.cutAt !== null) {
      this.overrunMs += ms;
      this.lastAfterCut = at;
    }
  }

  /** Wall ms the frames took after the first, and the audio they carried (the first frame's audio plays while the second comes). */
  get span(): { wall: number; audio: number } {
    return { wall: this.firstAt === null ? 0 : this.lastAt - this.firstAt, audio: this.audioMs - this.lastFrameMs };
  }

  figures(): TurnFigures {
    const { wall, audio } = this.span;
    const out: TurnFigures = {
      first_audio_ms: this.firstAt === null ? null : round(this.firstAt - this.startedAt),
      audio_ms: round(this.audioMs),
      rtf: wall >= 1 ? Math.round((audio / wall) * 100) / 100 : null,
      stalls: this.stalls,
      gap_ms: round(this.gapMs),
    };
    if (this.cutAt !== null) {
      out.overrun_ms = round(this.overrunMs);
      out.stop_ms = this.lastAfterCut === null ? 0 : round(this.lastAfterCut - this.cutAt);
    }
    return out;
  }
}

/** The whole stream's figures: its first answer's first audio, sums over its answers, and each answer when there were several. */
export interface DeliveryFigures extends TurnFigures {
  turns?: TurnFigures[];
  turns_total?: number;
}

/** Each answer's figures and the whole stream's, made together (a report reads both). */
export interface DeliverySummary {
  whole: DeliveryFigures;
  turns: TurnFigures[];
}

export class DeliveryRecord {
  private readonly turns: Turn[];
  private turnsTotal = 1;
  private current: Turn;
  /** The summary as last made; dropped by every change (a finished stream's is made once, however often it is read). */
  private made: DeliverySummary | null = null;

  constructor(startedAt: number) {
    this.current = new Turn(startedAt);
    this.turns = [this.current];
  }

  /**
   * A new answer begins, counted from `at`. An answer that sent nothing and was not cut is replaced
   * (a socket's first piece of text starts its first answer).
   */
  begin(at: number): void {
    this.made = null;
    const c = this.current;
    if (c.firstAt === null && c.cutAt === null) {
      this.current = new Turn(at);
      this.turns[this.turns.length - 1] = this.current;
      return;
    }
    this.current = new Turn(at);
    this.turnsTotal++;
    // Past the bound, the newest answer's figures stand in for the last one kept.
    if (this.turns.length < MAX_TURNS) this.turns.push(this.current);
    else this.turns[MAX_TURNS - 1] = this.current;
  }

  /** An audio frame carrying `ms` of new audio left at `at`. */
  sent(ms: number, at: number): void {
    if (ms <= 0) return;
    this.made = null;
    this.current.sent(ms, at);
  }

  /** The client left, or cancelled the current answer, at `at` (the first cut of an answer counts; none once it is whole). */
  cut(at: number): void {
    if (this.current.complete || this.current.cutAt !== null) return;
    this.made = null;
    this.current.cutAt = at;
  }

  /** The current answer's audio is whole. */
  done(): void {
    this.current.complete = true;
  }

  /** The cut was the emulator's own (a fault, a shutdown): not the client's, not timed. */
  uncut(): void {
    this.made = null;
    const c = this.current;
    c.cutAt = null;
    c.overrunMs = 0;
    c.lastAfterCut = null;
  }

  /** Each answer's figures (at most MAX_TURNS). */
  turnFigures(): TurnFigures[] {
    return this.summary().turns;
  }

  figures(): DeliveryFigures {
    return this.summary().whole;
  }

  summary(): DeliverySummary {
    if (this.made) return this.made;
    const turns = this.turns.map((t) => t.figures());
    const first = turns.find((t) => t.first_audio_ms !== null);
    let wall = 0;
    let audio = 0;
    for (const t of this.turns) {
      const s = t.span;
      wall += s.wall;
      audio += s.audio;
    }
    const whole: DeliveryFigures = {
      first_audio_ms: first?.first_audio_ms ?? null,
      audio_ms: round(turns.reduce((n, t) => n + t.audio_ms, 0)),
      rtf: wall >= 1 ? Math.round((audio / wall) * 100) / 100 : null,
      stalls: turns.reduce((n, t) => n + t.stalls, 0),
      gap_ms: round(turns.reduce((n, t) => n + t.gap_ms, 0)),
    };
    const cut = turns.filter((t) => t.overrun_ms !== undefined);
    if (cut.length) {
      whole.overrun_ms = round(cut.reduce((n, t) => n + t.overrun_ms!, 0));
      whole.stop_ms = Math.max(...cut.map((t) => t.stop_ms!));
    }
    if (this.turnsTotal > 1) {
      whole.turns = turns;
      if (this.turnsTotal > turns.length) whole.turns_total = this.turnsTotal;
    }
    this.made = { whole, turns };
    return this.made;
  }

  toJSON(): DeliveryFigures {
    return this.figures();
  }
}
