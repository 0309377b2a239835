// POST /v1/speech_to_text, what it answers (speech-current.md E1-E3): the emulator's own audio in every
// container decoded in process is transcribed exactly, with the synthesis's true times; foreign audio
// comes from the recognition fixture by the file's SHA-256, else an empty result with the true duration;
// each response_format and timestamp_level; the event stream.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../../helpers/emulator.js';
import { ffprobe } from '../../helpers/ffprobe.js';
import { KINDS, toneWav, transcode, type Kind } from '../../helpers/transcode.js';
import { speak, sttFile, sttStream, type Spoken } from './stt-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

const TEXT = 'Hello, world. This is a test <#0.5#> ok! Done?';
const SPOKEN = 'Hello, world. This is a test ok! Done?';
const SENTENCES = ['Hello, world.', 'This is a test ok!', 'Done?'];
const WORDS = [['Hello', 'world'], ['This', 'is', 'a', 'test', 'ok'], ['Done']];

let own: Spoken;
beforeAll(async () => {
  own = await speak(emu.speechUrl, TEXT);
});
afterAll(async () => {
  await ctl.call('POST', '/reset?fixtures=true');
});

describe("the emulator's own audio", () => {
  // Decoders add delay (MP3); the transcript's times are where the speech is in the file.
  const tolerance: Partial<Record<Kind, number>> = { wav: 0.0005, rf64: 0.0005, aiff: 0.0005, flac: 0.0005, mp3: 0.06 };
  for (const kind of Object.keys(tolerance) as Kind[]) {
    it(`${kind}: the text spoken (pause markers left out), sentence segments at the subtitle times, S1, the container's duration`, async () => {
      const bytes = kind === 'wav' ? own.wav : await transcode(own.wav, kind);
      const res = await sttFile(emu.speechUrl, bytes, { response_format: 'verbose_json' });
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body)).toEqual(['text', 'duration', 'n_speakers', 'segments', 'trace_id']);
      expect(res.body.text).toBe(SPOKEN);
      expect(res.body.n_speakers).toBe(1);
      expect(res.body.segments.map((s: { text: string }) => s.text)).toEqual(SENTENCES);
      res.body.segments.forEach((s: { id: number; start: number; end: number; speaker: string }, i: number) => {
        expect(s.id).toBe(i);
        expect(s.speaker).toBe('S1');
        expect(Math.abs(s.start - own.sentences[i]!.start)).toBeLessThanOrEqual(tolerance[kind]!);
        expect(Math.abs(s.end - own.sentences[i]!.end)).toBeLessThanOrEqual(tolerance[kind]!);
      });
      const probe = await ffprobe(bytes, { ext: KINDS[kind].ext });
      expect(Math.abs(res.body.duration * 1000 - probe.durationMs)).toBeLessThan(kind === 'mp3' ? 80 : 1);
      if (kind === 'wav') expect(res.body.duration).toBe(Math.round(own.durationMs) / 1000);
    });
  }

  it('word level: one segment per word without punctuation, inside its sentence, the first and last on its edges', async () => {
    const res = await sttFile(emu.speechUrl, own.wav, { response_format: 'verbose_json', timestamp_level: 'word' });
    expect(res.body.text).toBe(SPOKEN);
    const words = res.body.segments as { id: number; start: number; end: number; speaker: string; text: string }[];
    expect(words.map((w) => w.text)).toEqual(WORDS.flat());
    let at = 0;
    WORDS.forEach((group, i) => {
      const sentence = own.sentences[i]!;
      const mine = words.slice(at, at + group.length);
      at += group.length;
      expect(Math.abs(mine[0]!.start - sentence.start)).toBeLessThanOrEqual(0.0005);
      expect(Math.abs(mine.at(-1)!.end - sentence.end)).toBeLessThanOrEqual(0.0005);
      for (const w of mine) {
        expect(w.start).toBeGreaterThanOrEqual(sentence.start - 0.0005);
        expect(w.end).toBeLessThanOrEqual(sentence.end + 0.0005);
        expect(w.end).toBeGreaterThan(w.start);
        expect(w.speaker).toBe('S1');
      }
    });
    // True word times: the words are separated by the synthesis's gaps, not spread evenly.
    expect(words[1]!.start - words[0]!.end).toBeGreaterThan(0.1);
  });

  it('Chinese: one word segment per character, sentences without spaces between them', async () => {
    const zh = await speak(emu.speechUrl, '你好，世界。今天很好！');
    const sentences = await sttFile(emu.speechUrl, zh.wav, { response_format: 'verbose_json' });
    expect(sentences.body.text).toBe('你好，世界。今天很好！');
    expect(sentences.body.segments.map((s: { text: string }) => s.text)).toEqual(['你好，世界。', '今天很好！']);
    const words = await sttFile(emu.speechUrl, zh.wav, { response_format: 'verbose_json', timestamp_level: 'word' });
    expect(words.body.segments.map((s: { text: string }) => s.text)).toEqual([...'你好世界今天很好']);
  });

  it('plain-text pronunciation replacements appear as spoken; tone annotations keep the written text', async () => {
    const own = await speak(emu.speechUrl, 'OMG, this works. 处理好了。', { pronunciation_dict: { tone: ['OMG/oh my god', '处理/(chu3)(li3)'] } });
    const res = await sttFile(emu.speechUrl, own.wav, { response_format: 'verbose_json', timestamp_level: 'word' });
    expect(res.body.text).toBe('oh my god, this works.处理好了。');
    expect(res.body.segments.map((s: { text: string }) => s.text)).toEqual(['oh', 'my', 'god', 'this', 'works', '处', '理', '好', '了']);
  });

  it('a dialogue (a platform podcast, MP3): one speaker per voice in order of appearance, turns cut at sentence ends, word times per speaker', async () => {
    const lines = ['Is this real? I wonder.', 'Not at all.', 'Are you sure?'];
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, { json: { dialogueText: lines.join('\n') }, headers: { 'x-api-key': 'stt-podcast' } });
    expect(pod.body.error_code).toBe(0);
    const mp3 = Buffer.from(await (await fetch(pod.body.data.audioUrl)).arrayBuffer());
    const res = await sttFile(emu.speechUrl, mp3, { response_format: 'verbose_json' });
    expect(res.body.text).toBe(lines.join(' '));
    expect(res.body.n_speakers).toBe(2);
    const segments = res.body.segments as { start: number; end: number; speaker: string; text: string }[];
    expect(segments.map((s) => `${s.speaker}:${s.text}`)).toEqual(['S1:Is this real?', 'S1:I wonder.', 'S2:Not at all.', 'S1:Are you sure?']);
    for (let i = 1; i < segments.length; i++) expect(segments[i]!.start).toBeGreaterThan(segments[i - 1]!.end);
    const words = await sttFile(emu.speechUrl, mp3, { response_format: 'verbose_json', timestamp_level: 'word' });
    expect(words.body.segments.map((s: { speaker: string; text: string }) => `${s.speaker}:${s.text}`)).toEqual([
      'S1:Is',
      'S1:this',
      'S1:real',
      'S1:I',
      'S1:wonder',
      'S2:Not',
      'S2:at',
      'S2:all',
      'S1:Are',
      'S1:you',
      'S1:sure',
    ]);
    expect(Math.abs(words.body.duration - pod.body.data.durationSec)).toBeLessThan(0.08);
  });

  it('audio cut short gives the sentences it holds, and its own duration', async () => {
    const cutAt = 2.8; // the second sentence ends at about 3.67 s
    const frames = Math.round(cutAt * 32000);
    const cut = Buffer.from(own.wav.subarray(0, 44 + frames * 2));
    cut.writeUInt32LE(frames * 2, 40);
    cut.writeUInt32LE(36 + frames * 2, 4);
    const res = await sttFile(emu.speechUrl, cut, { response_format: 'verbose_json' });
    expect(res.body.text).toBe('Hello, world.');
    expect(res.body.duration).toBe(cutAt);
  });
});

describe('foreign audio', () => {
  it('without a fixture: empty text, no speakers, no segments, the true duration; SRT empty, WebVTT the header alone', async () => {
    const tone = toneWav(1.234);
    const json = await sttFile(emu.speechUrl, tone);
    expect(json.body).toEqual({ text: '', duration: 1.234, trace_id: json.headers.get('trace-id') });
    const verbose = await sttFile(emu.speechUrl, tone, { response_format: 'verbose_json' });
    expect(verbose.body).toMatchObject({ text: '', duration: 1.234, n_speakers: 0, segments: [] });
    expect((await sttFile(emu.speechUrl, tone, { response_format: 'srt' })).text).toBe('');
    expect((await sttFile(emu.speechUrl, tone, { response_format: 'vtt' })).text).toBe('WEBVTT\n\n');
  });

  for (const kind of ['aac', 'm4a', 'm4a-alac', 'opus', 'vorbis'] as Kind[]) {
    it(`${kind} (no in-process decoder): probed for its duration, answered from the fixture (none here: empty)`, async () => {
      const bytes = await transcode(own.wav, kind);
      const res = await sttFile(emu.speechUrl, bytes);
      expect(res.status, res.text).toBe(200);
      expect(res.body.text).toBe('');
      // The container's own count (mdhd, granules, ADTS frames) holds the encoder's priming samples:
      // within 50 ms of the synthesized audio. (ffprobe only estimates raw ADTS from its bit rate.)
      expect(Math.abs(res.body.duration * 1000 - own.durationMs)).toBeLessThan(50);
    });
  }

  it('the recognition fixture by SHA-256 of the file bytes: its segments and speakers, a variant per language header', async () => {
    const bytes = await transcode(own.wav, 'opus');
    const text = await transcode(toneWav(2), 'm4a');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const current = (await ctl.call('GET', '/fixtures/recognition.json')).body.content;
    const rules = [
      {
        sha256: sha(bytes),
        text: 'unused when segments are given',
        segments: [
          { start: 0.5, end: 1.5, speaker: 'S1', text: 'Good morning.' },
          { start: 2, end: 3.25, speaker: 'S2', text: 'Morning to you.' },
        ],
        languages: { zh: { text: '早上好。', segments: [{ start: 0.5, end: 1.5, speaker: 'S1', text: '早上好。' }] } },
      },
      { sha256: sha(text), text: 'Only a text.' },
    ];
    const put = await ctl.call('PUT', '/fixtures/recognition.json', { ...current, rules: [...current.rules, ...rules] });
    expect(put.status, put.text).toBe(200);

    const verbose = await sttFile(emu.speechUrl, bytes, { response_format: 'verbose_json' });
    expect(verbose.body.text).toBe('Good morning. Morning to you.');
    expect(verbose.body.n_speakers).toBe(2);
    expect(verbose.body.segments).toEqual([
      { id: 0, start: 0.5, end: 1.5, speaker: 'S1', text: 'Good morning.' },
      { id: 1, start: 2, end: 3.25, speaker: 'S2', text: 'Morning to you.' },
    ]);
    const words = await sttFile(emu.speechUrl, bytes, { response_format: 'verbose_json', timestamp_level: 'word' });
    expect(words.body.segments.map((s: { text: string; speaker: string }) => `${s.speaker}:${s.text}`)).toEqual([
      'S1:Good',
      'S1:morning',
      'S2:Morning',
      'S2:to',
      'S2:you',
    ]);
    const zh = await sttFile(emu.speechUrl, bytes, {}, { headers: { language: 'ZH' } });
    expect(zh.body.text).toBe('早上好。');
    const en = await sttFile(emu.speechUrl, bytes, {}, { headers: { language: 'en' } });
    expect(en.body.text).toBe('Good morning. Morning to you.');
    const plain = await sttFile(emu.speechUrl, text, { response_format: 'verbose_json' });
    expect(plain.body.segments).toEqual([{ id: 0, start: 0, end: plain.body.duration, speaker: 'S1', text: 'Only a text.' }]);
  });
});

describe('response formats', () => {
  it('json: exactly text, duration and trace_id (the Trace-Id header, 32 lowercase hex), no base_resp; timestamp_level ignored', async () => {
    for (const level of [undefined, 'word', 'sentence', '']) {
      const res = await sttFile(emu.speechUrl, own.wav, level === undefined ? {} : { timestamp_level: level });
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Object.keys(res.body)).toEqual(['text', 'duration', 'trace_id']);
      expect(res.body.text).toBe(SPOKEN);
      expect(res.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(res.headers.get('trace-id')).toBe(res.body.trace_id);
    }
  });

  it('timestamp_level "" is sentence', async () => {
    const empty = await sttFile(emu.speechUrl, own.wav, { response_format: 'verbose_json', timestamp_level: '' });
    const sentence = await sttFile(emu.speechUrl, own.wav, { response_format: 'verbose_json', timestamp_level: 'sentence' });
    expect(empty.body.segments).toEqual(sentence.body.segments);
  });

  const ms = (s: number) => Math.round(s * 1000);
  const clock = (s: number, sep: string) => {
    const t = ms(s);
    const p = (n: number, w = 2) => String(n).padStart(w, '0');
    return `${p(Math.floor(t / 3600000))}:${p(Math.floor(t / 60000) % 60)}:${p(Math.floor(t / 1000) % 60)}${sep}${p(t % 1000, 3)}`;
  };

  it('srt: cues from 1, HH:MM:SS,mmm at the true times, no speaker prefix, text/plain; charset=utf-8', async () => {
    const res = await sttFile(emu.speechUrl, own.wav, { response_format: 'srt' });
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('trace-id')).toMatch(/^[0-9a-f]{32}$/);
    const expected = SENTENCES.map((t, i) => `${i + 1}\n${clock(own.sentences[i]!.start, ',')} --> ${clock(own.sentences[i]!.end, ',')}\n${t}\n`).join('\n');
    expect(res.text).toBe(expected);
    expect(res.text.startsWith('1\n00:00:00,')).toBe(true);
  });

  it('vtt: WEBVTT, a blank line, cues with HH:MM:SS.mmm, text/vtt; charset=utf-8; word level gives word cues', async () => {
    const res = await sttFile(emu.speechUrl, own.wav, { response_format: 'vtt' });
    expect(res.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    const cues = SENTENCES.map((t, i) => `${clock(own.sentences[i]!.start, '.')} --> ${clock(own.sentences[i]!.end, '.')}\n${t}\n`).join('\n');
    expect(res.text).toBe(`WEBVTT\n\n${cues}`);
    const words = await sttFile(emu.speechUrl, own.wav, { response_format: 'vtt', timestamp_level: 'word' });
    expect(
      words.text
        .split('\n\n')
        .slice(1)
        .map((c) => c.split('\n')[1]),
    ).toEqual(WORDS.flat());
  });
});

describe('stream=true', () => {
  it('one data: event per sentence, joined equal to the json text, then the final event with the duration; no [DONE]', async () => {
    const res = await sttStream(emu.speechUrl, own.wav, { timestamp_level: 'word' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('trace-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(res.text.endsWith('\n\n')).toBe(true);
    for (const block of res.blocks) expect(block).toMatch(/^data: \{[^\n]*\}$/);
    expect(res.text).not.toContain('[DONE]');
    expect(res.events.slice(0, -1)).toEqual([
      { index: 0, delta: 'Hello, world. ', finish: false },
      { index: 1, delta: 'This is a test ok! ', finish: false },
      { index: 2, delta: 'Done?', finish: false },
    ]);
    expect(res.events.at(-1)).toEqual({ index: 3, delta: '', finish: true, duration: Math.round(own.durationMs) / 1000 });
    expect(res.events.map((e) => e.delta).join('')).toBe(SPOKEN);
  });

  it('any case of true; an empty transcript is the final event alone', async () => {
    const res = await sttStream(emu.speechUrl, toneWav(0.5), { stream: 'TRUE' });
    expect(res.events).toEqual([{ index: 0, delta: '', finish: true, duration: 0.5 }]);
  });

  it('a fault after the status line (cut_after_chunks=1) ends the body after one event, without the final event', async () => {
    const res = await sttStream(emu.speechUrl, own.wav, {}, { 'x-emulator-fault': 'cut_after_chunks=1' });
    expect(res.status).toBe(200);
    expect(res.events).toEqual([{ index: 0, delta: 'Hello, world. ', finish: false }]);
  });
});
