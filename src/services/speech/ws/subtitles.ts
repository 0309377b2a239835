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
    const words = this.type === 'sentence' ? null : wordsWithin(this.timeline, first.charStart, last.charEnd);
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

/** The timeline's words inside code points [begin, end): one per Chinese character or Latin-script word. */
export function wordsWithin(timeline: Timeline, begin: number, end: number): TimestampedWord[] {
  return timeline.words
    .filter((w) => w.charStart >= begin && w.charEnd <= end)
    .map((w) => ({ word: w.text, word_begin: w.charStart, word_end: w.charEnd, time_begin: w.startMs, time_end: w.endMs }));
}

/**
 * Encoded chunks paired with the subtitle their audio completes. Each chunk waits for the next one (how
 * far the audio made so far reaches is known then, `madeMs`); the last carries every unit left, so a
 * message after it (HTTP's status 2, the socket's is_final) carries none.
 */
export async function* withSubtitles<T>(chunks: AsyncIterable<T>, feed: SubtitleFeed, madeMs: () => number): AsyncGenerator<[T, WsSubtitle | undefined]> {
  let held: { chunk: T; ms: number } | undefined;
  for await (const chunk of chunks) {
    if (held) yield [held.chunk, feed.take(held.ms)];
    held = { chunk, ms: madeMs() };
  }
  if (held) yield [held.chunk, feed.rest()];
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
