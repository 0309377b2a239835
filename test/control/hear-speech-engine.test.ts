// `POST /_emulator/hear` on the speech engine's continuous speech: intact audio is whole with the
// synthesized word times (within 20 ms, 40 ms after lossy coding), a stream cut by a fault is a cut, silence
// inserted by a fault is a gap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import { strictEvents } from '../speech/helpers.js';

const TEXT = "Hello, world. This is a test of the emulator's voice, number 42. Is it clear?";
const KEY = { authorization: 'Bearer hear-speech-key' };
/** The documented tolerance of hear's word times on speech-engine audio (docs/audio.md): lossless, after lossy coding. */
const TOLERANCE_MS = { lossless: 20, lossy: 40 };
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startTestEmulator({ voiceEngine: 'speech' });
}, 60_000);
afterAll(async () => {
  await emu?.close();
});

const body = (text: string, audio_setting: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  model: 'speech-02-turbo',
  text,
  voice_setting: { voice_id: 'male-qn-qingse' },
  audio_setting,
  ...extra,
});

async function hear(bytes: Buffer, type: string) {
  const r = await call(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', body: bytes, headers: { 'content-type': type } });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** The synthesized words with their times (ms), from the word-level subtitles. */
async function plannedWords(subtitleUrl: string) {
  const segs = (await (await fetch(subtitleUrl)).json()) as any[];
  return segs.flatMap((s) => s.timestamped_words.map((w: any) => ({ word: w.word, start_ms: w.time_begin, end_ms: w.time_end })));
}

/** A T2A stream's audio chunks joined (what a player played), with the header's fault. */
async function streamed(text: string, fault: string, audio_setting: Record<string, unknown>) {
  const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
    method: 'POST',
    headers: { ...KEY, 'content-type': 'application/json', 'X-Emulator-Fault': fault },
    body: JSON.stringify({ ...body(text, audio_setting), stream: true }),
  });
  let raw = '';
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += Buffer.from(value).toString('utf8');
    }
  } catch {
    // A cut stream's connection is destroyed: what arrived is what was played.
  }
  return (
    raw
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)).data)
      // The final event (status 2) repeats the whole audio: the chunks are those of status 1.
      .filter((d) => d?.status === 1)
      .map((d) => d.audio as string)
  );
}

describe('hear on the speech engine', () => {
  for (const [format, type, rate, tolerance] of [
    ['pcm', 'audio/pcm;rate=16000', 16000, TOLERANCE_MS.lossless],
    ['wav', 'audio/wav', 24000, TOLERANCE_MS.lossless],
    ['flac', 'audio/flac', 44100, TOLERANCE_MS.lossless],
    ['mp3', 'audio/mpeg', 32000, TOLERANCE_MS.lossy],
    ['opus', 'audio/ogg', 24000, TOLERANCE_MS.lossy],
  ] as const) {
    it(`an intact ${format} answer: complete, no anomaly, word error rate 0, the synthesized word times`, async () => {
      const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
        json: body(TEXT, { format, sample_rate: rate }, { subtitle_enable: true, subtitle_type: 'word' }),
        headers: KEY,
      });
      expect(r.body.base_resp.status_code).toBe(0);
      const planned = await plannedWords(r.body.data.subtitle_file);
      const h = await hear(Buffer.from(r.body.data.audio, 'hex'), type);
      expect(h.utterances).toHaveLength(1);
      const u = h.utterances[0];
      expect([u.complete, u.word_error_rate, h.word_error_rate, h.anomalies], JSON.stringify(h)).toEqual([true, 0, 0, []]);
      expect(u.trace_id).toBe(r.body.trace_id);
      expect(u.words.map((w: any) => w.word)).toEqual(planned.map((w) => w.word));
      for (const [i, w] of u.words.entries()) {
        expect(Math.abs(w.start_ms - planned[i]!.start_ms), w.word).toBeLessThanOrEqual(tolerance);
        expect(Math.abs(w.end_ms - planned[i]!.end_ms), w.word).toBeLessThanOrEqual(tolerance);
      }
      expect(Math.abs(u.end_ms - r.body.extra_info.audio_length)).toBeLessThanOrEqual(tolerance + 30);
    });
  }

  it('other voices and speeds, and a pause marker (silence the plan holds, not a gap, not a word): whole, word error rate 0', async () => {
    for (const [text, voice_setting] of [
      ["Good morning! I'd like to book a table for two at seven thirty tonight, near the window if possible.", { voice_id: 'female-shaonv', speed: 0.8 }],
      ["Good morning! I'd like to book a table for two at seven thirty tonight, near the window if possible.", { voice_id: 'Wise_Woman', speed: 1.5 }],
      ['Please hold <#1.2#> while I check that for you.', { voice_id: 'male-qn-qingse' }],
    ] as const) {
      const r = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: { ...body(text, { format: 'pcm', sample_rate: 16000 }), voice_setting }, headers: KEY });
      const h = await hear(Buffer.from(r.body.data.audio, 'hex'), 'audio/pcm;rate=16000');
      expect(
        h.utterances.map((u: any) => [u.complete, u.word_error_rate]),
        JSON.stringify(h),
      ).toEqual([[true, 0]]);
      expect(h.anomalies).toEqual([]);
    }
  });

  it('a stream cut by cut_after_chunks: complete false, a cut, the words up to it and no other anomaly', async () => {
    const whole = streamedWhole();
    const chunks = await streamed(TEXT, 'cut_after_chunks=12', { format: 'pcm', sample_rate: 16000 });
    const full = await whole;
    const played = Buffer.from(chunks.join(''), 'hex');
    expect(played.length).toBeLessThan(full.length);
    const h = await hear(played, 'audio/pcm;rate=16000');
    const u = h.utterances[0];
    expect(u.complete, JSON.stringify(h)).toBe(false);
    expect(h.anomalies.map((a: any) => a.kind)).toEqual(['cut']);
    const playedMs = (played.length / 2 / 16000) * 1000;
    expect(Math.abs(h.anomalies[0].at_ms - playedMs)).toBeLessThan(200);
    const words = u.heard_text.split(' ');
    expect(words.length).toBeGreaterThanOrEqual(2);
    expect(words.length).toBeLessThan(15);
    expect("Hello world This is a test of the emulator's voice number 42 Is it clear".startsWith(u.heard_text)).toBe(true);
    expect(u.word_error_rate).toBeGreaterThan(0);
  });

  it('cut by a barge-in, then silence, then the next reply: the first cut, the second whole, one cut in all', async () => {
    const first = await streamedWhole();
    const next = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: body('Second reply follows quickly.', { format: 'pcm', sample_rate: 16000 }), headers: KEY });
    const cutMs = 3000;
    const recording = Buffer.concat([first.subarray(0, cutMs * 32), Buffer.alloc(16000 * 2), Buffer.from(next.body.data.audio, 'hex')]);
    const h = await hear(recording, 'audio/pcm;rate=16000');
    expect(
      h.utterances.map((u: any) => [u.full_text, u.complete]),
      JSON.stringify(h),
    ).toEqual([
      [TEXT, false],
      ['Second reply follows quickly.', true],
    ]);
    expect(h.utterances[0].heard_text).toBe('Hello world This is a test'); // "test" ends at 3038 ms: more than half of it heard
    expect(h.utterances[1].word_error_rate).toBe(0);
    expect(h.anomalies.map((a: any) => a.kind)).toEqual(['cut']);
    expect(Math.abs(h.anomalies[0].at_ms - cutMs)).toBeLessThanOrEqual(40);
  });

  for (const [at, what] of [
    [3000, 'inside a sentence'],
    [1650, 'at a sentence pause'],
  ] as const) {
    it(`gap_ms=600 ${what} (gap_at_ms=${at}): one gap of 600 ms there, the utterance complete, later words 600 ms later`, async () => {
      const plain = await hear(await streamedWhole(), 'audio/pcm;rate=16000');
      const chunks = await streamed(TEXT, `gap_ms=600;gap_at_ms=${at}`, { format: 'pcm', sample_rate: 16000 });
      const h = await hear(Buffer.from(chunks.join(''), 'hex'), 'audio/pcm;rate=16000');
      const u = h.utterances[0];
      expect([u.complete, u.word_error_rate], JSON.stringify(h)).toEqual([true, 0]);
      expect(
        h.anomalies.map((a: any) => a.kind),
        JSON.stringify(h.anomalies),
      ).toEqual(['gap']);
      expect(Math.abs(h.anomalies[0].duration_ms - 600)).toBeLessThanOrEqual(60);
      expect(h.anomalies[0].at_ms).toBeGreaterThan(at - 400);
      expect(h.anomalies[0].at_ms).toBeLessThanOrEqual(at + 10);
      const before = plain.utterances[0].words;
      for (const [i, w] of u.words.entries()) {
        const shift = before[i].start_ms >= at ? 600 : 0;
        expect(Math.abs(w.start_ms - before[i].start_ms - shift), w.word).toBeLessThanOrEqual(60);
      }
    });
  }
});

/** The same stream's audio, whole (no fault). */
async function streamedWhole(): Promise<Buffer> {
  const res = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: { ...body(TEXT, { format: 'pcm', sample_rate: 16000 }), stream: true }, headers: KEY });
  const events = strictEvents(res.text);
  return Buffer.from(
    events
      .filter((e) => e.data?.status === 1)
      .map((e) => e.data.audio as string)
      .join(''),
    'hex',
  );
}
