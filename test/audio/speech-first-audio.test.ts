// The speech engine's stream gives its first audio before the text's first sentence is spoken, however
// long that sentence is (commas only, no punctuation, one unbroken word, a long number): the signature
// leaves before any text is spoken, and no run of Flite grows with the text. Counted in Flite's runs and
// the characters they were given, never in time. The stream stays the whole answer, byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { synthesizeStreamSliced } from '../../src/audio/index.js';
import { prepareSpeechEngine } from '../../src/audio/speech/engine.js';
import type { Flite } from '../../src/audio/speech/flite.js';
import { rms, samplesOf } from '../helpers/audio.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import { strictEvents } from '../speech/helpers.js';

const KEY = { authorization: 'Bearer speech-first-audio-key' };
const REST = ' The next sentence is short. So is this one.';

/** First sentences of 2,000 characters with no full stop. */
const FIRST: Record<string, string> = {
  'commas only': 'one two three four five six seven eight, '.repeat(49).slice(0, 2000),
  'no punctuation': 'one two three four five six seven eight '.repeat(50).slice(0, 2000),
  'one unbroken word': 'supercalifragilistic'.repeat(100),
  'a long number': '7'.repeat(2000),
};

/** A text of `chars` characters opening with `first` (then short sentences). */
function textOf(first: string, chars: number): string {
  let t = first.trimEnd() + '.';
  while (t.length < chars) t += REST;
  return t.slice(0, chars - 1).trimEnd() + '.';
}

let emu: RunningEmulator;
let flite: Flite;
let run: Flite['run'];
/** What Flite was given so far: runs, and characters of text spoken (`-t`). */
const said = { runs: 0, chars: 0, longest: 0 };

beforeAll(async () => {
  emu = await startTestEmulator({ voiceEngine: 'speech' });
  flite = await prepareSpeechEngine();
  run = flite.run;
  flite.run = (args, input) => {
    const t = args.indexOf('-t');
    said.runs++;
    if (t >= 0) {
      said.chars += args[t + 1]!.length;
      said.longest = Math.max(said.longest, args[t + 1]!.length);
    }
    return run.call(flite, args, input);
  };
}, 60_000);
afterAll(async () => {
  if (flite) flite.run = run;
  await emu?.close();
});

const reset = () => Object.assign(said, { runs: 0, chars: 0, longest: 0 });

function body(text: string, extra: Record<string, unknown> = {}) {
  return { model: 'speech-02-turbo', text, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm', sample_rate: 16000 }, ...extra };
}

describe('the first audio comes before the first sentence is spoken', () => {
  it('in the library: the first block needs no run of Flite; 1.5 s of audio needs two runs of at most 50 characters', async () => {
    for (const [kind, first] of Object.entries(FIRST)) {
      reset();
      const stream = await synthesizeStreamSliced(
        { text: textOf(first, 9999), voices: [{ id: 'male-qn-qingse', weight: 1 }], sampleRate: 16000, channels: 1, engine: 'speech', textNormalization: true },
        { growing: true },
      );
      const it = stream[Symbol.asyncIterator]();
      let frames = (await it.next()).value!.length;
      expect(said.runs, kind).toBe(0);
      while (frames < 1.5 * 16000) frames += (await it.next()).value!.length;
      // One run speaks the first piece, one more says its words alone (for their times).
      expect(said.runs, kind).toBeLessThanOrEqual(2);
      expect(said.longest, kind).toBeLessThanOrEqual(60);
      await it.return!();
      await stream.done().catch(() => undefined);
    }
  });

  it('over HTTP: the first audio event of a streamed 9,999-character T2A comes before a fifth of its 2,000-character first sentence is spoken', async () => {
    for (const [kind, first] of Object.entries(FIRST)) {
      reset();
      const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...KEY },
        body: JSON.stringify(body(textOf(first, 9999), { stream: true })),
      });
      const reader = res.body!.getReader();
      let seen = '';
      let charsAtFirstAudio = -1;
      while (charsAtFirstAudio < 0) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
        if (/"audio":"[0-9a-f]/.test(seen)) charsAtFirstAudio = said.chars;
      }
      await reader.cancel();
      expect(charsAtFirstAudio, kind).toBeGreaterThanOrEqual(0);
      expect(charsAtFirstAudio, kind).toBeLessThan(400);
    }
  }, 60_000);
});

describe('a long first sentence streamed is the whole answer', () => {
  it('byte for byte, with the same length; its subtitles have sound where they say and every run of Flite is bounded', async () => {
    for (const [kind, first] of Object.entries(FIRST)) {
      // Shorter, still many runs of Flite each (a 2,000-digit number is a quarter of an hour read out).
      const text = textOf(first.slice(0, kind === 'a long number' ? 100 : 400), 600);
      reset();
      const streamed = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: body(text, { stream: true }), headers: KEY });
      expect(said.longest, kind).toBeLessThanOrEqual(60);
      const events = strictEvents(streamed.text);
      const audio = events
        .filter((e) => e.data?.status === 1)
        .map((e) => e.data.audio as string)
        .join('');
      const whole = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: body(text, { subtitle_enable: true, subtitle_type: 'word' }), headers: KEY });
      expect(whole.body.base_resp.status_code, whole.text.slice(0, 200)).toBe(0);
      expect(audio === whole.body.data.audio, kind).toBe(true);
      expect(events.at(-1).extra_info.audio_length, kind).toBe(whole.body.extra_info.audio_length);
      const samples = samplesOf(Buffer.from(audio, 'hex'));
      expect(Math.abs((samples.length / 16000) * 1000 - whole.body.extra_info.audio_length)).toBeLessThanOrEqual(1);
      const segs = (await (await fetch(whole.body.data.subtitle_file)).json()) as any[];
      const at = (ms: number) => Math.round((ms / 1000) * 16000);
      expect(segs[0].time_begin, kind).toBe(560);
      for (const s of segs) {
        // Each segment starts and ends with sound; its words lie inside it, in order.
        expect(rms(samples, at(s.time_begin), at(s.time_begin + 30)), `${kind}: ${s.text}`).toBeGreaterThan(1e-4);
        expect(rms(samples, at(s.time_end - 30), at(s.time_end)), `${kind}: ${s.text}`).toBeGreaterThan(1e-4);
        let prev = s.time_begin;
        for (const w of s.timestamped_words) {
          expect(w.time_begin).toBeGreaterThanOrEqual(prev);
          expect(w.time_end).toBeLessThanOrEqual(s.time_end);
          prev = w.time_end;
        }
      }
      if (kind === 'one unbroken word' || kind === 'a long number') {
        // The long word is one segment and one word, spoken over many seconds.
        expect(segs[0].timestamped_words, kind).toHaveLength(1);
        expect(segs[0].time_end - segs[0].time_begin, kind).toBeGreaterThan(3_000);
      }
    }
  }, 120_000);
});
