import { describe, expect, it } from 'vitest';
import { SubtitleFeed } from '../../src/services/speech/ws/subtitles.js';

const TEXT = 'Hé there. Bye now.';
const timeline = {
  sentences: [
    { text: 'Hé there.', charStart: 0, charEnd: 9, startMs: 0, endMs: 700 },
    { text: 'Bye now.', charStart: 10, charEnd: 18, startMs: 900, endMs: 1500 },
  ],
  words: [
    { text: 'Hé', charStart: 0, charEnd: 2, startMs: 0, endMs: 300 },
    { text: 'there', charStart: 3, charEnd: 8, startMs: 300, endMs: 700 },
    { text: 'Bye', charStart: 10, charEnd: 13, startMs: 900, endMs: 1200 },
    { text: 'now', charStart: 14, charEnd: 17, startMs: 1200, endMs: 1500 },
  ],
};

describe('subtitle feed of a speech WebSocket piece', () => {
  it('hands out each sentence once, when its audio has ended; rest() gives what is left', () => {
    const feed = new SubtitleFeed(timeline, 'sentence', TEXT);
    expect(feed.take(500)).toBeUndefined();
    expect(feed.take(800)).toEqual({ text: 'Hé there.', text_begin: 0, text_end: 9, time_begin: 0, time_end: 700, timestamped_words: null });
    expect(feed.take(800)).toBeUndefined();
    expect(feed.rest()).toMatchObject({ text: 'Bye now.', text_begin: 10, time_end: 1500 });
    expect(feed.rest()).toBeUndefined();
  });

  it('word lists the words of the sentences handed out; word_streaming carries the current segment so far; several units make one span', () => {
    const words = new SubtitleFeed(timeline, 'word', TEXT);
    expect(words.take(2000)).toMatchObject({ text: TEXT, text_begin: 0, text_end: 18, time_begin: 0, time_end: 1500 });
    const streaming = new SubtitleFeed(timeline, 'word_streaming', TEXT);
    // The segment whose audio has been made, whole once it is done (its punctuation included).
    expect(streaming.take(1000)).toEqual({
      text: 'Hé there.',
      text_begin: 0,
      text_end: 9,
      time_begin: 0,
      time_end: 700,
      timestamped_words: [
        { word: 'Hé', word_begin: 0, word_end: 2, time_begin: 0, time_end: 300 },
        { word: 'there', word_begin: 3, word_end: 8, time_begin: 300, time_end: 700 },
      ],
    });
    // The next segment so far: its first word, cumulative as more of it is made.
    expect(streaming.take(1300)).toMatchObject({ text: 'Bye', text_begin: 10, text_end: 13, time_begin: 900, time_end: 1200 });
    expect(streaming.take(1300)?.timestamped_words?.map((w) => w.word)).toEqual(['Bye']);
  });
});
