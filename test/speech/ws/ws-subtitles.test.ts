import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { piecesOf, session, START } from './ws-helpers.js';

/** `subtitle_enable` on the speech WebSocket: `data.subtitle` travels with the audio it describes (section 1.5). */
const { emu } = emulatorForFile({ plane: 'speech' });

const TEXT = 'The first sentence is here. A second sentence follows it. And then a third one closes the piece.';
const run = (extra: Record<string, unknown>, text = TEXT, format = 'mp3') =>
  session(emu.speechUrl, [{ ...START, ...extra, audio_setting: { format } }, { event: 'task_continue', text }, { event: 'task_finish' }]);
const audioMessages = (messages: any[]) => messages.filter((m) => m.event === 'task_continued' && m.base_resp.status_code === 0);

describe('subtitles on the speech WebSocket', () => {
  it('sentence: every sentence once, in order, with true offsets and times, on audio messages, never on is_final', async () => {
    const r = await run({ subtitle_enable: true });
    const msgs = audioMessages(r.messages);
    const subtitles = msgs.filter((m) => m.data?.subtitle).map((m) => m.data.subtitle);
    expect(subtitles.length).toBeGreaterThan(0);
    expect(msgs.at(-1).is_final).toBe(true);
    expect(msgs.at(-1).data.subtitle).toBeUndefined();
    // Together they cover the text once, in order, each one the text at its offsets.
    const chars = [...TEXT];
    let at = 0;
    let time = 0;
    for (const s of subtitles) {
      expect(s.text).toBe(chars.slice(s.text_begin, s.text_end).join(''));
      expect(s.text_begin).toBeGreaterThanOrEqual(at);
      expect(s.time_begin).toBeGreaterThanOrEqual(time);
      expect(s.time_end).toBeGreaterThan(s.time_begin);
      expect(s.timestamped_words).toBeNull();
      at = s.text_end;
      time = s.time_end;
    }
    expect(subtitles.map((s) => s.text).join(' ')).toBe(TEXT);
    // The audio is the same piece whether or not subtitles ride along, and the last subtitle ends within it.
    const piece = piecesOf(r.messages)[0]!;
    const plain = piecesOf((await run({})).messages)[0]!;
    expect(piece.audio.equals(plain.audio)).toBe(true);
    expect(time).toBeLessThanOrEqual(piece.extra.audio_length);
    expect(piece.extra).toEqual(plain.extra);
  });

  it('word: each subtitle lists its words; word_streaming hands out words as they are spoken', async () => {
    const words = audioMessages((await run({ subtitle_enable: true, subtitle_type: 'word' })).messages)
      .filter((m) => m.data?.subtitle)
      .map((m) => m.data.subtitle);
    const listed = words.flatMap((s) => s.timestamped_words);
    expect(listed.map((w: any) => w.word)).toEqual(TEXT.match(/[A-Za-z]+/g));
    for (const s of words) for (const w of s.timestamped_words) expect(w.word_begin >= s.text_begin && w.word_end <= s.text_end).toBe(true);
    for (const w of listed) expect(w.time_end).toBeGreaterThan(w.time_begin);

    const streaming = audioMessages((await run({ subtitle_enable: true, subtitle_type: 'word_streaming' }, TEXT.repeat(6))).messages)
      .filter((m) => m.data?.subtitle)
      .map((m) => m.data.subtitle);
    // More messages than sentences carry words: a subtitle need not wait for its sentence's end.
    expect(streaming.length).toBeGreaterThan(3);
    // Each carries the cumulative subtitle of its segment (section 2.10): a client that overwrites what it
    // holds per text_begin ends with every word once.
    const held = new Map<number, any>();
    for (const s of streaming) {
      const before = held.get(s.text_begin);
      if (before) expect(s.timestamped_words.slice(0, before.timestamped_words.length)).toEqual(before.timestamped_words);
      held.set(s.text_begin, s);
    }
    expect([...held.values()].flatMap((s) => s.timestamped_words).length).toBe(TEXT.repeat(6).match(/[A-Za-z]+/g)!.length);
  });

  it('a short piece gets its subtitle on an audio message before is_final; without subtitle_enable the audio is the same', async () => {
    const withSubs = audioMessages((await run({ subtitle_enable: true }, 'Hi there.', 'pcmu_raw')).messages);
    const last = withSubs.at(-1);
    expect(last.is_final).toBe(true);
    expect(last.data.subtitle).toBeUndefined();
    expect(withSubs.filter((m) => m.data.subtitle).map((m) => [m.is_final, m.data.subtitle.text])).toEqual([[false, 'Hi there.']]);
    const audio = (ms: any[]) => Buffer.concat(ms.map((m) => Buffer.from(m.data.audio, 'hex')));
    expect(last.extra_info.audio_size).toBe(audio(withSubs).length);
    const none = audioMessages((await run({}, 'Hi there.', 'pcmu_raw')).messages);
    expect(none.some((m) => m.data.subtitle)).toBe(false);
    expect(audio(none).equals(audio(withSubs))).toBe(true);
  });
});
