/**
 * Subtitles made from the synthesis timeline (the plan the audio is rendered from, so they are true to
 * it): `data.subtitle` on the WebSocket and on HTTP streaming (rule E16 follows the socket's rules of
 * section 2.10), and the word items of HTTP's subtitle file.
 */
import type { Timeline, TimelineSpan } from '../../../audio/types.js';

/** `subtitle_type` of `task_start` and of HTTP `/v1/t2a_v2`. */
export const SUBTITLE_TYPES = ['sentence', 'word', 'word_streaming'] as const;
export type SubtitleType = (typeof SUBTITLE_TYPES)[number];

export interface TimestampedWord {
  word: string;
  word_begin: number;
  word_end: number;
  time_begin: number;
  time_end: number;
}

/** `data.subtitle` of a `task_continued` message (section 1.5). */
export interface WsSubtitle {
  text: string;
  /** Code point offsets into the piece's text, end exclusive. */
  text_begin: number;
  text_end: number;
  /** ms from the start of this piece's synthesis. */
  time_begin: number;
  time_end: number;
  /** null for `sentence`; the words of the span for `word` and `word_streaming`. */
  timestamped_words: TimestampedWord[] | null;
}

/**
 * The subtitles of one piece, handed out as its audio advances (section 2.10). With `sentence` and
 * `word`, an audio message carries the segments (timeline sentences) whose audio ended by the time that
 * audio was made, once each, as one subtitle spanning them. With `word_streaming`, every message from
 * the first spoken word on carries the cumulative subtitle of the current segment: its words heard so
 * far, so a client that overwrites what it holds is always up to date, and a new `text_begin` starts a
 * new segment. Times and offsets are the synthesis timeline's, so they are true.
 */
export class SubtitleFeed {
  private readonly segments: TimelineSpan[];
  private readonly chars: string[];
  /** `sentence`, `word`: the next segment not handed out. */
  private next = 0;
  /** `word_streaming`: the segment shown, and whether it was shown whole. */
  private current = 0;
  private currentWhole = false;

  constructor(
    private readonly timeline: Timeline,
    private readonly type: SubtitleType,
    text: string,
  ) {
    this.segments = timeline.sentences;
    this.chars = [...text];
  }

  /** What the audio made by `heardMs` adds, or undefined when nothing. */
  take(heardMs: number): WsSubtitle | undefined {
    if (this.type === 'word_streaming') return this.cumulative(heardMs, false);
    let end = this.next;
    while (end < this.segments.length && this.segments[end]!.endMs <= heardMs) end++;
    return this.span(end);
  }

  /** Everything not handed out yet (the piece's last audio message). */
  rest(): WsSubtitle | undefined {
    if (this.type === 'word_streaming') return this.cumulative(Infinity, true);
    return this.span(this.segments.length);
  }

  private span(end: number): WsSubtitle | undefined {
    if (end <= this.next) return undefined;
    const from = this.next;
    this.next = end;
    return this.subtitle(from, end - 1, Infinity);
  }

  /** Whether any of a segment's audio (a word, or the whole of it) was made by `heardMs`. */
  private begun(index: number, heardMs: number): boolean {
    const seg = this.segments[index]!;
    if (seg.endMs <= heardMs) return true;
    return this.timeline.words.some((w) => w.charStart >= seg.charStart && w.charEnd <= seg.charEnd && w.endMs <= heardMs);
  }

  private cumulative(heardMs: number, last: boolean): WsSubtitle | undefined {
    const count = this.segments.length;
    if (count === 0) return undefined;
    // A segment shown whole gives way once the next one has begun (one segment per message: none is skipped).
    while (this.currentWhole && this.current + 1 < count && this.begun(this.current + 1, heardMs)) {
      this.current++;
      this.currentWhole = false;
    }
    if (last) {
      // The last message: the segment shown and every one after it, whole.
      const from = this.current;
      this.current = count - 1;
      this.currentWhole = true;
      return this.subtitle(from, count - 1, Infinity);
    }
    if (!this.begun(this.current, heardMs)) return undefined;
    const seg = this.segments[this.current]!;
    if (seg.endMs <= heardMs) this.currentWhole = true;
    return this.subtitle(this.current, this.current, heardMs);
  }

  /** Segments [from, to] as one subtitle, up to the last word heard by `heardMs` (whole when they ended). */
  private subtitle(from: number, to: number, heardMs: number): WsSubtitle {
    const first = this.segments[from]!;
    const lastSeg = this.segments[to]!;
    const whole = lastSeg.endMs <= heardMs;
    const words = wordsWithin(this.timeline, first.charStart, lastSeg.charEnd).filter((w) => whole || w.time_end <= heardMs);
    const end = whole ? lastSeg.charEnd : (words.at(-1)?.word_end ?? first.charStart);
    return {
      text: this.chars.slice(first.charStart, end).join(''),
      text_begin: first.charStart,
      text_end: end,
      time_begin: first.startMs,
      time_end: whole ? lastSeg.endMs : (words.at(-1)?.time_end ?? first.startMs),
      timestamped_words: this.type === 'sentence' ? null : words,
    };
  }
}

/** The timeline's words inside code points [begin, end): one per Chinese character or Latin-script word. */
export function wordsWithin(timeline: Timeline, begin: number, end: number): TimestampedWord[] {
  return timeline.words
    .filter((w) => w.charStart >= begin && w.charEnd <= end)
    .map((w) => ({ word: w.text, word_begin: w.charStart, word_end: w.charEnd, time_begin: w.startMs, time_end: w.endMs }));
}
