/**
 * Decoding bombs (issue items 5 and 6): small files that hold hours of audio, and IMA ADPCM. Each is
 * answered within seconds, or refused by its declared duration before it is decoded; memory grows by
 * a bounded amount and other requests are not held up (the emulator runs in this process, so a timer
 * here measures how long the event loop stalls).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegAudio, silentFlac } from '../helpers/hostile-inputs.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import type { RunningEmulator } from '../../src/index.js';
import { decodeToMono, probeAudio } from '../../src/audio/index.js';
import { execFileSync } from 'node:child_process';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
  // The parsers and WebAssembly decoders load on first use (once per process): not what is measured.
  await detectFile('warm-up', 'short.mp3', ffmpegAudio('sine=f=300:r=8000', 2, ['-c:a', 'libmp3lame', '-b:a', '8k'], 'mp3'));
  const key = await upload('warm-up', 'short.flac', silentFlac(2));
  await call(`${emu.platformUrl}/v1/diarize`, { json: { object_key: key }, headers: { 'x-api-key': 'warm-up' } });
});
afterAll(() => emu.close());

/** Runs `work` while a 10 ms timer records the longest stall of the event loop and the RSS growth. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; stallMs: number; rssGrowthMb: number }> {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last - 10);
    last = now;
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const t0 = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, ms: performance.now() - t0, stallMs, rssGrowthMb: (peak - rss0) / 1e6 };
  } finally {
    clearInterval(timer);
  }
}

async function upload(key: string, name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('scene', 'audio');
  form.append('file', new Blob([bytes]), name);
  const r = await call(`${emu.platformUrl}/v1/files/upload`, { body: form, headers: { 'x-api-key': key } });
  expect(r.body.error_code).toBe(0);
  return r.body.data.object_key;
}

function detectFile(key: string, name: string, bytes: Buffer) {
  const form = new FormData();
  form.append('audio', new Blob([bytes]), name);
  return call(`${emu.platformUrl}/v1/audio/ai-detect`, { body: form, headers: { 'x-api-key': key } });
}

/** MP3 at 8 kbps without an Xing header (its length is the frame count), repeated to `copies` times. */
function lowBitrateMp3(seconds: number, copies: number): Buffer {
  const one = ffmpegAudio('sine=f=300:r=8000', seconds, ['-c:a', 'libmp3lame', '-b:a', '8k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
  return Buffer.concat(Array.from({ length: copies }, () => one));
}

describe('decoding is bounded', () => {
  it('a 600 KB FLAC of 10 h of silence: diarization refuses it by its declared duration, at once', async () => {
    const flac = silentFlac(36000);
    expect(flac.length).toBeLessThan(700_000);
    const key = await upload('bomb-flac', 'long.flac', flac);
    const m = await measured(() => call(`${emu.platformUrl}/v1/diarize`, { json: { object_key: key }, headers: { 'x-api-key': 'bomb-flac' } }));
    expect(m.result.body).toMatchObject({
      error_code: 10001,
      error_message: expect.stringMatching(/^object_key audio lasts 36000\.\d s, longer than the 3600 s/),
    });
    expect(m.ms).toBeLessThan(2000);
    expect(m.stallMs).toBeLessThan(500);
    expect(m.rssGrowthMb).toBeLessThan(100);
  });

  it('a FLAC whose STREAMINFO says 60 s but whose frames hold 10 h: diarization and speech-to-text read no more than it declares', async () => {
    const liar = silentFlac(36000, 60);
    expect((await probeAudio(liar)).durationMs).toBe(60000);
    const key = await upload('bomb-liar', 'liar.flac', liar);
    const diar = await measured(() => call(`${emu.platformUrl}/v1/diarize`, { json: { object_key: key }, headers: { 'x-api-key': 'bomb-liar' } }));
    expect(diar.result.body).toMatchObject({ error_code: 0, data: { speakers: [] } });
    expect(diar.ms).toBeLessThan(2000);
    expect(diar.rssGrowthMb).toBeLessThan(100);

    const form = new FormData();
    form.append('model', 'asr-1.0');
    form.append('file', new Blob([liar]), 'liar.flac');
    const heard = await measured(() => call(`${emu.speechUrl}/v1/speech_to_text`, { body: form, headers: { authorization: 'Bearer bomb-liar' } }));
    expect(heard.result.status).toBe(200);
    expect(heard.ms).toBeLessThan(2000);
    expect(heard.rssGrowthMb).toBeLessThan(100);
  });

  it('a streamed FLAC of 10 h (no total in STREAMINFO): voice save refuses it by duration without decoding it', async () => {
    const flac = silentFlac(36000, false);
    expect((await probeAudio(flac)).durationMs).toBeGreaterThan(36_000_000);
    const key = await upload('bomb-save', 'streamed.flac', flac);
    const saved = await measured(() =>
      call(`${emu.platformUrl}/v1/voice/save`, { json: { voice_id: 'long-one', ref_audio: key, ref_text: 'hello' }, headers: { 'x-api-key': 'bomb-save' } }),
    );
    expect(saved.result.body).toMatchObject({ error_code: 20015 });
    expect(saved.ms).toBeLessThan(2000);
    expect(saved.rssGrowthMb).toBeLessThan(100);
  });

  it('an 8 kbps MP3 of 2 h: detection reads its head only, diarization refuses it; 40 min is diarized in slices', async () => {
    const long = lowBitrateMp3(300, 24);
    expect((await probeAudio(long)).durationMs).toBeGreaterThan(7_100_000);
    const det = await measured(() => detectFile('bomb-mp3', 'long.mp3', long));
    expect(det.result.body).toMatchObject({ error_code: 0, data: { prediction: 'Real' } });
    expect(det.ms).toBeLessThan(3000);
    expect(det.stallMs).toBeLessThan(500);
    expect(det.rssGrowthMb).toBeLessThan(100);

    const key = await upload('bomb-mp3', 'long.mp3', long);
    const refused = await measured(() => call(`${emu.platformUrl}/v1/diarize`, { json: { object_key: key }, headers: { 'x-api-key': 'bomb-mp3' } }));
    expect(refused.result.body.error_message).toMatch(/^object_key audio lasts 7\d{3}\.\d s, longer than the 3600 s this operation reads$/);
    expect(refused.ms).toBeLessThan(2000);

    // Within the bound: the whole file is read, but slice by slice (the old decoder held all of it and the loop).
    const key40 = await upload('bomb-mp3', 'forty.mp3', long.subarray(0, Math.floor(long.length / 3)));
    const ok = await measured(() => call(`${emu.platformUrl}/v1/diarize`, { json: { object_key: key40 }, headers: { 'x-api-key': 'bomb-mp3' } }));
    expect(ok.result.body.error_code).toBe(0);
    expect(ok.result.body.data.speakers[0].segments.at(-1).end_time).toBeGreaterThan(2390);
    expect(ok.stallMs).toBeLessThan(1000);
    expect(ok.rssGrowthMb).toBeLessThan(100);
  }, 30_000);

  it('an IMA ADPCM WAV of 1.5 MB is answered by ai-detect within a second, and decodes like ffmpeg decodes it', async () => {
    const wav = ffmpegAudio('sine=f=440:r=16000', 190, ['-c:a', 'adpcm_ima_wav'], 'wav');
    expect(wav.length).toBeGreaterThan(1_400_000);
    const m = await measured(() => detectFile('adpcm-key', 'adpcm.wav', wav));
    expect(m.result.body).toMatchObject({ error_code: 0, data: { prediction: 'Real' } });
    expect(m.ms).toBeLessThan(1500);
    expect(m.stallMs).toBeLessThan(500);

    const ours = await decodeToMono(wav);
    const ref = execFileSync('ffmpeg', ['-loglevel', 'error', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', 'pipe:1'], { input: wav, maxBuffer: 64e6 });
    expect(ours.samples.length).toBe(ref.length / 2);
    let worst = 0;
    for (let i = 0; i < ours.samples.length; i += 97) worst = Math.max(worst, Math.abs(ours.samples[i]! - ref.readInt16LE(i * 2) / 32768));
    // ffmpeg rounds the step differently from the reference expansion: a few LSB apart at most.
    expect(worst).toBeLessThan(0.003);
  });
});
