import { describe, expect, it } from 'vitest';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { req, strictEvents, t2a } from './helpers.js';
import { rms, samplesOf } from '../helpers/audio.js';

/** HTTP subtitles (rule E16): subtitle_type, word items true to the audio, subtitles on the event stream. */
const { emu } = emulatorForFile({ plane: 'speech' });

const EN = 'The first sentence is here. A second sentence follows it, and then a third one closes.';
const ZH = '今天天气很好。我们一起去公园吧！';
const PCM = { format: 'pcm', sample_rate: 16000 };

const fileOf = async (r: any) => {
  const res = await fetch(r.body.data.subtitle_file); // a plain GET without a key, as mmx downloads it
  expect(res.status).toBe(200);
  return (await res.json()) as any[];
};
const speak = (extra: Record<string, unknown>, text = EN) => t2a(emu.speechUrl, req({ subtitle_enable: true, ...extra }, text));

/** The event stream of a request: its events, parsed strictly. */
async function events(body: Record<string, unknown>): Promise<any[]> {
  const r = await t2a(emu.speechUrl, body);
  expect(r.headers.get('content-type')).toBe('text/event-stream');
  return strictEvents(r.text);
}

/** Checks that each word is sound from its first to its last millisecond and that the gaps between words are silent. */
function expectTrueWordTimes(samples: Int16Array, rate: number, words: any[]) {
  const at = (ms: number) => (ms / 1000) * rate;
  for (const [i, w] of words.entries()) {
    expect(rms(samples, at(w.time_begin), at(w.time_end))).toBeGreaterThan(0.05);
    // Voiced right at both ends: the first and the last 20 ms of the word carry sound.
    expect(rms(samples, at(w.time_begin), at(w.time_begin + 20))).toBeGreaterThan(0.01);
    expect(rms(samples, at(w.time_end - 20), at(w.time_end))).toBeGreaterThan(0.01);
    const next = words[i + 1];
    if (next) {
      expect(next.time_begin).toBeGreaterThanOrEqual(w.time_end);
      // Silence from just after the word to just before the next.
      if (next.time_begin - w.time_end >= 4) expect(rms(samples, at(w.time_end + 1), at(next.time_begin - 1))).toBeLessThan(0.002);
    }
  }
}

describe('subtitle_type on HTTP', () => {
  it('a value outside sentence, word, word_streaming is 2013 naming the field', async () => {
    for (const bad of ['chars', 'Word', 3, true]) {
      const r = await speak({ subtitle_type: bad });
      expect([r.status, r.body.base_resp.status_code, r.body.base_resp.status_msg]).toEqual([
        200,
        2013,
        'invalid params, subtitle_type must be one of sentence, word, word_streaming',
      ]);
    }
    expect((await speak({ subtitle_type: null })).body.base_resp.status_code).toBe(0);
  });

  it('sentence (the default): segments carry timestamped_words null', async () => {
    for (const extra of [{}, { subtitle_type: 'sentence' }]) {
      const segs = await fileOf(await speak({ ...extra, audio_setting: PCM }));
      expect(segs.map((s) => s.text).join(' ')).toBe(EN);
      for (const s of segs) {
        expect(Object.keys(s)).toContain('timestamped_words');
        expect(s.timestamped_words).toBeNull();
      }
    }
  });

  it('word: one item per Latin word or Chinese character, offsets into the text, times true to the audio', async () => {
    const text = `${EN} ${ZH}`;
    const r = await speak({ subtitle_type: 'word', audio_setting: PCM }, text);
    const segs = await fileOf(r);
    const cps = [...text];
    const words = segs.flatMap((s) => s.timestamped_words);
    expect(words.map((w) => w.word)).toEqual([...EN.match(/[A-Za-z]+/g)!, ...ZH.replace(/[。！]/g, '')]);
    for (const s of segs) {
      for (const w of s.timestamped_words) {
        expect(Object.keys(w).sort()).toEqual(['time_begin', 'time_end', 'word', 'word_begin', 'word_end']);
        expect(cps.slice(w.word_begin, w.word_end).join('')).toBe(w.word);
        expect(w.word_begin >= s.text_begin && w.word_end <= s.text_end).toBe(true);
        expect(w.time_begin >= s.time_begin && w.time_end <= s.time_end).toBe(true);
      }
    }
    expectTrueWordTimes(samplesOf(Buffer.from(r.body.data.audio, 'hex')), 16000, words);
    expect(words.at(-1).time_end).toBeLessThanOrEqual(r.body.extra_info.audio_length);
  });

  it('word times hold in a decoded WAV at another rate too (ffmpeg decodes it)', async () => {
    const r = await speak({ subtitle_type: 'word', audio_setting: { format: 'wav', sample_rate: 24000 } }, '你好，世界。Hello again, world.');
    const wav = Buffer.from(r.body.data.audio, 'hex');
    expect((await ffprobe(wav, { ext: 'wav' })).sampleRate).toBe(24000);
    const decoded = samplesOf(await ffmpegPcm16(wav, { ext: 'wav', rate: 24000 }));
    const words = (await fileOf(r)).flatMap((s) => s.timestamped_words);
    expect(words.map((w) => w.word)).toEqual(['你', '好', '世', '界', 'Hello', 'again', 'world']);
    expectTrueWordTimes(decoded, 24000, words);
  });

  it('word_streaming without stream is word', async () => {
    const word = await fileOf(await speak({ subtitle_type: 'word' }));
    const streaming = await fileOf(await speak({ subtitle_type: 'word_streaming' }));
    expect(streaming).toEqual(word);
  });

  it('subtitle_type without subtitle_enable, and the old mmx subtitle: true, make no subtitles', async () => {
    for (const body of [req({ subtitle_type: 'word' }, EN), req({ subtitle: true }, EN), req({ subtitle_enable: false, subtitle_type: 'word' }, EN)]) {
      const r = await t2a(emu.speechUrl, body);
      expect(r.body.base_resp.status_code).toBe(0);
      expect(Object.keys(r.body.data).sort()).toEqual(['audio', 'ced', 'status']);
      expect(r.body.subtitle_info).toBeUndefined();
    }
    const evs = await events(req({ stream: true, subtitle_type: 'word_streaming' }, EN));
    expect(evs.some((e) => e.data?.subtitle)).toBe(false);
  });
});

describe('subtitles on the HTTP event stream', () => {
  const streamed = (type: string | undefined, text = EN, audio: Record<string, unknown> = PCM) =>
    events(req({ stream: true, subtitle_enable: true, ...(type ? { subtitle_type: type } : {}), audio_setting: audio }, text));

  it('sentence: each sentence once, in order, on intermediate chunks; the final chunk has no subtitle and no subtitle_file', async () => {
    const evs = await streamed(undefined);
    const final = evs.at(-1);
    expect(final.data.status).toBe(2);
    expect(final.data.subtitle).toBeUndefined();
    expect(final.data.subtitle_file).toBeUndefined();
    const subs = evs.filter((e) => e.data.subtitle).map((e) => [e.data.status, e.data.subtitle]);
    expect(subs.every(([status]) => status === 1)).toBe(true);
    const cps = [...EN];
    let time = 0;
    for (const [, s] of subs) {
      expect(s.text).toBe(cps.slice(s.text_begin, s.text_end).join(''));
      expect(s.timestamped_words).toBeNull();
      expect(s.time_begin).toBeGreaterThanOrEqual(time);
      time = s.time_end;
    }
    expect(subs.map(([, s]) => s.text).join(' ')).toBe(EN);
    expect(time).toBeLessThanOrEqual(final.extra_info.audio_length);
    // The same audio as without subtitles.
    const plain = await events(req({ stream: true, audio_setting: PCM }, EN));
    const audioOf = (list: any[]) => Buffer.concat(list.filter((e) => e.data.status === 1).map((e) => Buffer.from(e.data.audio, 'hex')));
    expect(audioOf(evs).equals(audioOf(plain))).toBe(true);
    expect(final.data.audio).toBe(plain.at(-1).data.audio);
  });

  it('a subtitle never runs ahead of the audio sent with it', async () => {
    for (const type of ['sentence', 'word_streaming']) {
      const evs = await streamed(type, EN.repeat(3));
      let bytes = 0;
      for (const e of evs.filter((x) => x.data.status === 1)) {
        bytes += e.data.audio.length / 2;
        const sentMs = (bytes / 2 / 16000) * 1000;
        if (e.data.subtitle) expect(e.data.subtitle.time_end).toBeLessThanOrEqual(sentMs + 1);
      }
    }
  });

  it('word lists the words of each subtitle; word_streaming hands words out as they are spoken', async () => {
    const text = EN.repeat(4);
    const words = (await streamed('word', text)).filter((e) => e.data.subtitle).map((e) => e.data.subtitle);
    expect(words.flatMap((s) => s.timestamped_words).map((w: any) => w.word)).toEqual(text.match(/[A-Za-z]+/g));
    const chunks = (await streamed('word_streaming', text)).filter((e) => e.data.status === 1);
    const streaming = chunks.filter((e) => e.data.subtitle).map((e) => e.data.subtitle);
    expect(streaming.length).toBeGreaterThan(words.length);
    // From the first spoken word on, every chunk carries the cumulative subtitle of its segment.
    const firstWith = chunks.findIndex((e) => e.data.subtitle);
    expect(chunks.slice(firstWith).every((e) => e.data.subtitle)).toBe(true);
    const cps = [...text];
    const held = new Map<number, any>();
    for (const s of streaming) {
      expect(s.text).toBe(cps.slice(s.text_begin, s.text_end).join(''));
      const before = held.get(s.text_begin);
      if (before) expect(s.timestamped_words.slice(0, before.timestamped_words.length)).toEqual(before.timestamped_words);
      held.set(s.text_begin, s);
    }
    // Overwriting per text_begin, as the documents tell clients to, leaves every word once, in order.
    const kept = [...held.values()].sort((a, b) => a.text_begin - b.text_begin);
    expect(kept.flatMap((s) => s.timestamped_words).map((w: any) => w.word)).toEqual(text.match(/[A-Za-z]+/g));
    expect(
      kept
        .map((s) => s.text)
        .join('')
        .replace(/\s/g, ''),
    ).toBe(text.replace(/\s/g, ''));
  });

  it('mp3 streams carry subtitles too, and the chunks stay whole frames', async () => {
    const evs = await streamed('word', EN, { format: 'mp3', sample_rate: 32000 });
    expect(evs.filter((e) => e.data.subtitle).length).toBeGreaterThan(0);
    const whole = Buffer.from(evs.at(-1).data.audio, 'hex');
    expect((await ffprobe(whole, { ext: 'mp3' })).codec).toBe('mp3');
  });
});
