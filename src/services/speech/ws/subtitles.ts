import type { Timeline, TimelineSpan } from '../../../audio/types.js';

/** `subtitle_type` of `task_start`. */
export type SubtitleType = 'sentence' | 'word' | 'word_streaming';

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
 * The subtitles of one piece, handed out as its audio advances: each audio message carries the units
 * whose audio has ended by the time that audio was made (sentences; words for `word_streaming`), as
 * one subtitle spanning them. Times and offsets are the synthesis timeline's, so they are true.
 */
export class SubtitleFeed {
  private readonly units: TimelineSpan[];
  private next = 0;
  private readonly chars: string[];

  constructor(
    private readonly timeline: Timeline,
    private readonly type: SubtitleType,
    text: string,
  ) {
    this.units = type === 'word_streaming' ? timeline.words : timeline.sentences;
    this.chars = [...text];
  }

  /** The units that ended by `heardMs`, or undefined when none did. */
  take(heardMs: number): WsSubtitle | undefined {
    let end = this.next;
    while (end < this.units.length && this.units[end]!.endMs <= heardMs) end++;
    return this.span(end);
  }

  /** Every unit not handed out yet. */
  rest(): WsSubtitle | undefined {
    return this.span(this.units.length);
  }

  private span(end: number): WsSubtitle | undefined {
    if (end <= this.next) return undefined;
    const first = this.units[this.next]!;
    const last = this.units[end - 1]!;
    this.next = end;
    const words =
      this.type === 'sentence'
        ? null
        : this.timeline.words
            .filter((w) => w.charStart >= first.charStart && w.charEnd <= last.charEnd)
            .map((w) => ({ word: w.text, word_begin: w.charStart, word_end: w.charEnd, time_begin: w.startMs, time_end: w.endMs }));
    return {
      text: this.chars.slice(first.charStart, last.charEnd).join(''),
      text_begin: first.charStart,
      text_end: last.charEnd,
      time_begin: first.startMs,
      time_end: last.endMs,
      timestamped_words: words,
    };
  }
}

/** The same blocks, counting the sample frames handed on (how far the audio made so far reaches). */
export function countingFrames(source: AsyncIterable<Int16Array>, channels: number, onFrames: (frames: number) => void): AsyncIterable<Int16Array> {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const block of source) {
        onFrames(block.length / channels);
        yield block;
      }
    },
  };
}
