// The pure rules of speech to text's transcripts (E2): what was spoken of a synthesis text, words,
// separators, sentence merging and cutting, and the SRT/WebVTT time format past an hour.
import { describe, expect, it } from 'vitest';
import type { SignatureRecord } from '../../../src/core/state/signatures.js';
import { clockTime, srtBody, streamEvents, vttBody } from '../../../src/services/speech/stt/format.js';
import { joinText, recordTranscript, separator, spokenOf, wordsOf } from '../../../src/services/speech/stt/transcript.js';

describe('spokenOf', () => {
  it('leaves out pause markers and interjection tags, applies plain-text replacements only', () => {
    expect(spokenOf('Wait <#1.5#> now (laughs) [sighs] ok.')).toBe('Wait now ok.');
    expect(spokenOf('Say OMG twice: OMG.', [{ text: 'OMG', replacement: 'oh my god' }])).toBe('Say oh my god twice: oh my god.');
    expect(spokenOf('处理好了', [{ text: '处理', replacement: '(chu3)(li3)' }])).toBe('处理好了');
    // The longer of two replacements starting at one place wins, as in the synthesis.
    expect(
      spokenOf('New York City', [
        { text: 'New', replacement: 'Knew' },
        { text: 'New York', replacement: 'the Big Apple' },
      ]),
    ).toBe('the Big Apple City');
  });
});

describe('words and separators', () => {
  it('a word is a run of letters, digits, marks and inner apostrophes; each Han character is one', () => {
    expect(wordsOf("Don't stop — it's 3 o'clock, café!")).toEqual(["Don't", 'stop', "it's", '3', "o'clock", 'café']);
    expect(wordsOf('我们go吧。')).toEqual(['我', '们', 'go', '吧']);
  });

  it('a space only between two Latin-script pieces', () => {
    expect(separator('Hello.', 'World.')).toBe(' ');
    expect(separator('你好。', 'Hello.')).toBe('');
    expect(separator('Hello.', '你好。')).toBe('');
    expect(
      joinText([
        { startMs: 0, endMs: 1, speaker: 'S1', text: 'A.' },
        { startMs: 1, endMs: 2, speaker: 'S1', text: 'B.' },
      ]),
    ).toBe('A. B.');
  });
});

describe('recordTranscript', () => {
  const record = (segments: SignatureRecord['segments'], words?: SignatureRecord['words']): SignatureRecord => ({
    id: '0123456789abcdef',
    kind: 'dialogue',
    text: '',
    speakers: [],
    segments,
    words,
    durationMs: 10_000,
    createdAtMs: 0,
  });

  it('merges fragments of one speaker up to a sentence end, never across speakers; names speakers by first appearance', () => {
    const t = recordTranscript(
      record([
        { text: 'a long sentence split at a comma,', startMs: 0, endMs: 1000, speaker: 2 },
        { text: 'and its end.', startMs: 1100, endMs: 2000, speaker: 2 },
        { text: 'Another voice', startMs: 2500, endMs: 3000, speaker: 1 },
        { text: 'Back again.', startMs: 3500, endMs: 4000, speaker: 2 },
      ]),
      10_000,
      0,
    );
    expect(t.sentences.map((p) => [p.speaker, p.text, p.startMs, p.endMs])).toEqual([
      ['S1', 'a long sentence split at a comma, and its end.', 0, 2000],
      ['S2', 'Another voice', 2500, 3000],
      ['S1', 'Back again.', 3500, 4000],
    ]);
  });

  it('cuts a turn of two sentences at its end by its words, and shifts every time by the offset', () => {
    const words = [
      { text: 'One', startMs: 100, endMs: 300, speaker: 1 },
      { text: 'two.', startMs: 400, endMs: 600, speaker: 1 },
      { text: 'Three!', startMs: 1200, endMs: 1500, speaker: 1 },
    ];
    const t = recordTranscript(record([{ text: 'One two. Three!', startMs: 100, endMs: 1500, speaker: 1 }], words), 10_000, 25);
    expect(t.sentences.map((p) => [p.text, p.startMs, p.endMs])).toEqual([
      ['One two.', 125, 625],
      ['Three!', 1225, 1525],
    ]);
    expect(t.words.map((w) => [w.text, w.startMs])).toEqual([
      ['One', 125],
      ['two', 425],
      ['Three', 1225],
    ]);
  });

  it('keeps only what the audio holds (300 ms tolerance at a segment end)', () => {
    const t = recordTranscript(
      record([
        { text: 'Heard.', startMs: 0, endMs: 1000, speaker: 1 },
        { text: 'Almost heard.', startMs: 1500, endMs: 2200, speaker: 1 },
        { text: 'Not heard.', startMs: 2500, endMs: 3000, speaker: 1 },
      ]),
      1950,
      0,
    );
    expect(t.sentences.map((p) => p.text)).toEqual(['Heard.', 'Almost heard.']);
  });
});

describe('formats', () => {
  const pieces = [
    { startMs: 3_723_456, endMs: 3_724_000.4, speaker: 'S1', text: 'Late.' },
    { startMs: 3_725_000, endMs: 3_726_999.6, speaker: 'S1', text: 'Later.' },
  ];

  it('HH:MM:SS,mmm and HH:MM:SS.mmm past an hour, rounded to the millisecond', () => {
    expect(clockTime(3_723_456, ',')).toBe('01:02:03,456');
    expect(clockTime(3_726_999.6, '.')).toBe('01:02:07.000');
    expect(srtBody(pieces)).toBe('1\n01:02:03,456 --> 01:02:04,000\nLate.\n\n2\n01:02:05,000 --> 01:02:07,000\nLater.\n');
    expect(vttBody(pieces)).toBe('WEBVTT\n\n01:02:03.456 --> 01:02:04.000\nLate.\n\n01:02:05.000 --> 01:02:07.000\nLater.\n');
    expect(srtBody([])).toBe('');
    expect(vttBody([])).toBe('WEBVTT\n\n');
  });

  it('stream deltas carry the separator before the next sentence; the final event has the duration', () => {
    expect(streamEvents(pieces, 3_727_000).map((e) => e.body)).toEqual([
      { index: 0, delta: 'Late. ', finish: false },
      { index: 1, delta: 'Later.', finish: false },
      { index: 2, delta: '', finish: true, duration: 3727 },
    ]);
    // Each event stands for its sentence's end in the audio (the final one for the whole): the times stt.stream_pace paces by.
    expect(streamEvents(pieces, 3_727_000).map((e) => e.atMs)).toEqual([...pieces.map((p) => p.endMs), 3_727_000]);
  });
});
