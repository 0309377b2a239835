// `POST /_emulator/hear` on the speech engine: a sentence heard twice is a `repeat`, a sentence skipped
// is `missing`, found by where the sentences that follow start (the plan's sentence pauses) — spliced
// in the decoded audio at the synthesized sentence times, as a player that replays or drops a chunk would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import { ffmpegPcm16 } from '../helpers/ffprobe.js';

const TEXT = 'The first sentence is short. The second one is a good deal longer than that. Third comes next. Then the fourth sentence closes it.';
const KEY = { authorization: 'Bearer hear-speech-repeat-key' };
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startTestEmulator({ voiceEngine: 'speech' });
}, 60_000);
afterAll(async () => {
  await emu?.close();
});

async function hear(bytes: Buffer) {
  const r = await call(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', body: bytes, headers: { 'content-type': 'audio/pcm;rate=16000' } });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** PCM16 at 16 kHz of the text (synthesized as `format`, decoded with ffmpeg when not PCM) and its sentence spans (ms). */
async function spoken(text: string, voice_id = 'male-qn-qingse', format = 'pcm') {
  const audio_setting = { format, sample_rate: format === 'pcm' ? 16000 : 32000 };
  const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
    json: { model: 'speech-02-turbo', text, voice_setting: { voice_id }, audio_setting, subtitle_enable: true },
    headers: KEY,
  });
  expect(r.body.base_resp.status_code).toBe(0);
  const segs = (await (await fetch(r.body.data.subtitle_file)).json()) as any[];
  const audio = Buffer.from(r.body.data.audio, 'hex');
  return {
    pcm: format === 'pcm' ? audio : await ffmpegPcm16(audio, { ext: format, rate: 16000 }),
    sentences: segs.map((s) => ({ text: s.text as string, start: s.time_begin as number, end: s.time_end as number })),
  };
}

const at = (ms: number) => Math.round(ms * 16) * 2; // byte offset of a time in PCM16 at 16 kHz

describe('hear on the speech engine: a sentence heard twice or skipped', () => {
  for (const voice of ['male-qn-qingse', 'female-shaonv']) {
    it(`${voice}: the same audio unspliced is whole, without anomalies`, async () => {
      const { pcm } = await spoken(TEXT, voice);
      const h = await hear(pcm);
      expect([h.utterances[0].complete, h.utterances[0].word_error_rate, h.anomalies], JSON.stringify(h)).toEqual([true, 0, []]);
    });

    for (const k of [1, 2]) {
      it(`${voice}: sentence ${k + 1} played twice is one repeat of its length; its words heard twice`, async () => {
        const { pcm, sentences } = await spoken(TEXT, voice);
        const s = sentences[k]!;
        const next = sentences[k + 1]!;
        // The sentence and its pause, again after it.
        const twice = Buffer.concat([pcm.subarray(0, at(next.start)), pcm.subarray(at(s.start), at(next.start)), pcm.subarray(at(next.start))]);
        const h = await hear(twice);
        const u = h.utterances[0];
        expect(
          h.anomalies.map((a: any) => a.kind),
          JSON.stringify(h.anomalies),
        ).toEqual(['repeat']);
        expect(Math.abs(h.anomalies[0].duration_ms - (next.start - s.start))).toBeLessThanOrEqual(60);
        expect(Math.abs(h.anomalies[0].at_ms - next.start)).toBeLessThanOrEqual(60);
        expect(u.complete).toBe(true);
        const words = (t: string) => t.replace(/[.,]/g, '').split(' ');
        const expected = [...sentences.slice(0, k + 1), s, ...sentences.slice(k + 1)].flatMap((x) => words(x.text));
        expect(u.heard_text.split(' ')).toEqual(expected);
        expect(u.word_error_rate).toBeGreaterThan(0);
      });

      it(`${voice}: sentence ${k + 1} skipped is missing, its words not heard`, async () => {
        const { pcm, sentences } = await spoken(TEXT, voice);
        const s = sentences[k]!;
        const next = sentences[k + 1]!;
        const skipped = Buffer.concat([pcm.subarray(0, at(s.start)), pcm.subarray(at(next.start))]);
        const h = await hear(skipped);
        const u = h.utterances[0];
        expect(
          h.anomalies.map((a: any) => a.kind),
          JSON.stringify(h.anomalies),
        ).toEqual(['missing']);
        expect(Math.abs(h.anomalies[0].duration_ms - (next.start - s.start))).toBeLessThanOrEqual(60);
        expect(Math.abs(h.anomalies[0].at_ms - s.start)).toBeLessThanOrEqual(60);
        expect(u.complete).toBe(true);
        const words = (t: string) => t.replace(/[.,]/g, '').split(' ');
        expect(u.heard_text.split(' ')).toEqual(sentences.filter((_, i) => i !== k).flatMap((x) => words(x.text)));
      });
    }
  }

  it('after MP3 coding (decoded, then spliced): sentence 2 played twice is a repeat, sentence 3 skipped is missing', async () => {
    const { pcm, sentences } = await spoken(TEXT, 'male-qn-qingse', 'mp3');
    const [s2, s3, s4] = [sentences[1]!, sentences[2]!, sentences[3]!];
    const twice = await hear(Buffer.concat([pcm.subarray(0, at(s3.start)), pcm.subarray(at(s2.start), at(s3.start)), pcm.subarray(at(s3.start))]));
    expect(
      twice.anomalies.map((a: any) => [a.kind, Math.abs(a.duration_ms - (s3.start - s2.start)) <= 60]),
      JSON.stringify(twice.anomalies),
    ).toEqual([['repeat', true]]);
    const skipped = await hear(Buffer.concat([pcm.subarray(0, at(s3.start)), pcm.subarray(at(s4.start))]));
    expect(
      skipped.anomalies.map((a: any) => [a.kind, Math.abs(a.duration_ms - (s4.start - s3.start)) <= 60]),
      JSON.stringify(skipped.anomalies),
    ).toEqual([['missing', true]]);
  });
});
