/**
 * `POST /_emulator/hear`: the word error rate of what was heard against what was synthesized, and the
 * impairments of a bad line it finds in a caller's audio made by `POST /_emulator/speak`.
 */
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const RATE = 16000;
const TEXT = 'I would like to change my booking to Friday morning, please.';

async function hear(bytes: Buffer, contentType = `audio/pcm;rate=${RATE}`) {
  const r = await call(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', body: bytes, headers: { 'content-type': contentType } });
  expect(r.status).toBe(200);
  return r.body;
}

/** A caller's audio (PCM16 mono 16 kHz unless asked otherwise) and where speak put its impairments. */
async function speak(extra: Record<string, unknown>) {
  const audio = await ctl.client.speak({ text: TEXT, ...extra });
  return { bytes: Buffer.from(audio.bytes), impairments: audio.impairments, contentType: audio.contentType };
}

const kinds = (line: any) => line.impairments.map((i: any) => i.kind);

describe('word error rate', () => {
  it('is 0 for the whole audio and, for audio cut short, the share of the words not heard', async () => {
    const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm', sample_rate: RATE } },
      headers: { authorization: 'Bearer hear-line-key' },
    });
    const pcm = Buffer.from(r.body.data.audio, 'hex');
    const whole = await hear(pcm);
    expect(whole.utterances).toHaveLength(1);
    expect(whole.utterances[0].word_error_rate).toBe(0);
    expect(whole.word_error_rate).toBe(0);

    const half = pcm.subarray(0, Math.floor(pcm.length / 4) * 2);
    const cut = await hear(half);
    const [u] = cut.utterances;
    expect(u.complete).toBe(false);
    const said = TEXT.split(' ').length;
    const heard = u.heard_text ? u.heard_text.split(' ').length : 0;
    expect(heard).toBeLessThan(said);
    // Only deletions: the words not heard over the words said.
    expect(u.word_error_rate).toBeCloseTo((said - heard) / said, 4);
    expect(u.word_error_rate).toBeGreaterThan(0);
    expect(cut.word_error_rate).toBe(u.word_error_rate);
  });

  it('is null for audio that holds none of the emulator’s syntheses', async () => {
    const tone = Buffer.alloc(RATE * 2);
    for (let i = 0; i < RATE; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
    const heard = await hear(tone);
    expect(heard.utterances).toEqual([]);
    expect(heard.word_error_rate).toBeNull();
  });
});

describe('a bad line, found by hear', () => {
  it('clean caller audio: no impairment, every word heard', async () => {
    const clean = await hear((await speak({})).bytes);
    expect(clean.line.impairments).toEqual([]);
    expect(clean.line.snr_db).toBeNull();
    expect(clean.line.clipped_samples).toBe(0);
    expect(clean.line.leading_silence_ms).toBeLessThan(20);
    expect(clean.word_error_rate).toBe(0);
  });

  it('noise_db: the noise and its signal-to-noise ratio (within 2.5 dB); the words are still heard', async () => {
    for (const snr of [12, 24]) {
      const noisy = await hear((await speak({ noise_db: snr })).bytes);
      expect(kinds(noisy.line)).toEqual(['noise']);
      expect(Math.abs(noisy.line.snr_db - snr)).toBeLessThanOrEqual(2.5);
      expect(noisy.line.impairments[0].value).toBe(noisy.line.snr_db);
      expect(noisy.word_error_rate).toBe(0);
    }
  });

  it('gain_db: a level 24 dB under the clean one (within 1 dB), reported low', async () => {
    const clean = await hear((await speak({})).bytes);
    const quiet = await hear((await speak({ gain_db: -24 })).bytes);
    expect(kinds(quiet.line)).toEqual(['low_level']);
    expect(Math.abs(quiet.line.level_dbfs - (clean.line.level_dbfs - 24))).toBeLessThanOrEqual(1);
    expect(quiet.word_error_rate).toBe(0);
  });

  it('clip: the clipped samples', async () => {
    const spoken = await speak({ clip: 12 });
    const loud = await hear(spoken.bytes);
    expect(kinds(loud.line)).toEqual(['clipping']);
    expect(loud.line.clipped_samples).toBeGreaterThan(100);
    expect(loud.line.clipped_samples).toBeLessThanOrEqual(spoken.impairments.clippedSamples);
  });

  it('dropouts: each found where speak put it (those inside words), also through the μ-law codec', async () => {
    for (const extra of [{ dropouts: 4 }, { dropouts: 6, codec: 'mulaw' }, { dropouts: 4, noise_db: 15, seed: 'other' }]) {
      const spoken = await speak(extra);
      const heard = await hear(spoken.bytes);
      const found = heard.line.impairments.filter((i: any) => i.kind === 'dropout');
      expect(found.length, JSON.stringify(extra)).toBeGreaterThanOrEqual(Math.ceil(spoken.impairments.dropoutsAtMs.length / 2));
      for (const d of found) {
        expect(spoken.impairments.dropoutsAtMs.some((at) => Math.abs(at - d.at_ms) <= 5)).toBe(true);
        expect(Math.abs(d.duration_ms - 40)).toBeLessThanOrEqual(3);
      }
      expect(heard.word_error_rate).toBe(0);
    }
  });

  it('leading_silence_ms: the silence before the caller starts (within 20 ms)', async () => {
    const late = await hear((await speak({ leading_silence_ms: 400, format: 'wav' })).bytes, 'audio/wav');
    expect(kinds(late.line)).toEqual(['leading_silence']);
    expect(Math.abs(late.line.leading_silence_ms - 400)).toBeLessThanOrEqual(20);
    expect(late.line.impairments[0].duration_ms).toBe(late.line.leading_silence_ms);
  });
});
