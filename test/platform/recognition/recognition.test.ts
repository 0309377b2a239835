import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { ffmpegPcm16 } from '../../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile();
const KEY = 'recognition-key';

function stt(json: unknown, key: string | null = KEY, headers: Record<string, string> = {}) {
  return call(`${emu.platformUrl}/v1/speech-to-text`, { json, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
}

/** PCM16 LE bytes of float samples. */
function pcmBytes(samples: Float32Array | number[]): Buffer {
  const b = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2);
  return b;
}

/** Deterministic noise-like "foreign speech" of `ms` at 16 kHz. */
function foreign(ms: number, seed = 1): Buffer {
  const n = (ms * 16000) / 1000;
  const out = new Float32Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = 0.2 * Math.sin((2 * Math.PI * 220 * i) / 16000) + 0.1 * (x / 2147483648 - 0.5);
  }
  return pcmBytes(out);
}

/** Linear interpolation from 24 kHz PCM16 to 16 kHz, the plain way a client might resample. */
function linearTo16k(pcm24: Int16Array): Buffer {
  const n = Math.floor((pcm24.length * 16000) / 24000);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const pos = (i * 24000) / 16000;
    const j = Math.floor(pos);
    const f = pos - j;
    out[i] = ((pcm24[j] ?? 0) * (1 - f) + (pcm24[j + 1] ?? pcm24[j] ?? 0) * f) / 32768;
  }
  return pcmBytes(out);
}

describe('loopback: synthesize → resample to 16 kHz → recognize', () => {
  it('gives back the text spoken, after ffmpeg and after linear resampling', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'male_calm', generate_text: text, language: 'en' }),
    });
    expect(res.status).toBe(200);
    const wav = Buffer.from(await res.arrayBuffer());
    const viaFfmpeg = await ffmpegPcm16(wav, { ext: 'wav' });
    const pcm24 = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
    for (const pcm of [viaFfmpeg, linearTo16k(pcm24)]) {
      const r = await stt({ audio_data: pcm.toString('base64'), audio_format: 'pcm16' });
      expect(r.status).toBe(200);
      expect(r.body.text).toBe(text);
      expect(r.body.language).toBe('en');
      expect(r.body.duration_ms).toBe(Math.round((pcm.length / 2 / 16000) * 1000));
    }
  });

  it('audio cut short gives the sentences heard so far', async () => {
    const text = 'This first sentence is rather long indeed. And then a second one.';
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'female_bright', generate_text: text, audio_format: 'pcm' }),
    });
    const pcm24 = new Int16Array(new Uint8Array(await res.arrayBuffer()).buffer);
    const record = emu.emulator.signatures.save().find((r) => r.text === text)!;
    const cutMs = record.segments[0]!.endMs + 150;
    const cut = linearTo16k(pcm24.subarray(0, Math.round((cutMs * 24000) / 1000)));
    const r = await stt({ audio_data: cut.toString('base64') });
    expect(r.body.text).toBe('This first sentence is rather long indeed.');
  });

  it('a podcast decoded from MP3 is transcribed line after line', async () => {
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, {
      json: { dialogueText: 'Welcome to the show.\nGlad to be here.' },
      headers: { 'x-api-key': KEY },
    });
    expect(pod.body.error_code).toBe(0);
    const mp3 = Buffer.from(await (await fetch(pod.body.data.audioUrl)).arrayBuffer());
    const pcm = await ffmpegPcm16(mp3, { ext: 'mp3' });
    const r = await stt({ audio_data: pcm.toString('base64') });
    expect(r.body.text).toBe('Welcome to the show. Glad to be here.');
  });
});

describe('answers for audio the emulator did not make', () => {
  it('silence gives an empty text with its true duration', async () => {
    const r = await stt({ audio_data: Buffer.alloc(2 * 16000 * 2.5).toString('base64'), audio_format: 'pcm_16000' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ text: '', language: 'en', confidence: 0, duration_ms: 2500 });
  });

  it('the duration rule of the fixture (2–3 s) and a stable default by content hash beyond it', async () => {
    const short = await stt({ audio_data: foreign(2500).toString('base64') });
    expect(short.body).toMatchObject({ text: 'Hello, can you hear me?', language: 'en', confidence: 0.93, duration_ms: 2500 });
    const a = await stt({ audio_data: foreign(4000, 7).toString('base64') });
    const b = await stt({ audio_data: foreign(4000, 7).toString('base64') });
    expect(a.body).toEqual(b.body);
    const defaults = emu.emulator.fixtures.data['recognition.json'].defaults.map((d) => d.text);
    expect(defaults).toContain(a.body.text);
    expect(a.body.duration_ms).toBe(4000);
    // Success is the bare object: no envelope.
    expect(Object.keys(a.body).sort()).toEqual(['confidence', 'duration_ms', 'language', 'text']);
  });

  it('a rule by SHA-256 of the PCM wins over the duration rule', async () => {
    const pcm = foreign(2500, 3);
    const dir = mkdtempSync(join(tmpdir(), 'fx-'));
    const sha = createHash('sha256').update(pcm).digest('hex');
    writeFileSync(
      join(dir, 'recognition.json'),
      JSON.stringify({
        rules: [
          { min_ms: 2000, max_ms: 3000, text: 'by duration' },
          { sha256: sha, text: '按哈希', language: 'zh', confidence: 0.91 },
        ],
        defaults: [{ text: 'default' }],
      }),
    );
    const other = await startTestEmulator({ fixturesDir: dir });
    try {
      const r = await call(`${other.platformUrl}/v1/speech-to-text`, { json: { audio_data: pcm.toString('base64') }, headers: { 'x-api-key': KEY } });
      expect(r.body).toEqual({ text: '按哈希', language: 'zh', confidence: 0.91, duration_ms: 2500 });
    } finally {
      await other.close();
    }
  });

  it('language given by the caller is echoed', async () => {
    const r = await stt({ audio_data: foreign(2500).toString('base64'), language: 'fr' });
    expect(r.body.language).toBe('fr');
  });
});

describe('errors: envelope with an HTTP status', () => {
  const env = (code: number) => ({ error_code: code, succeed: false, data: null });

  it('audio shorter than 2 s is 20014 with HTTP 400', async () => {
    const r = await stt({ audio_data: foreign(1999).toString('base64') });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject(env(20014));
    expect(r.body.error_message).toMatch(/2000 ms/);
    expect((await stt({ audio_data: foreign(2000).toString('base64') })).status).toBe(200);
  });

  it('missing audio_data, a bad audio_format, bad Base64 and odd bytes are 10001 with HTTP 400', async () => {
    for (const [body, field] of [
      [{}, 'audio_data'],
      [{ audio_data: '' }, 'audio_data'],
      [{ audio_data: 42 }, 'audio_data'],
      [{ audio_data: foreign(2500).toString('base64'), audio_format: 'wav' }, 'audio_format'],
      [{ audio_data: '***not base64***' }, 'Base64'],
      [{ audio_data: Buffer.alloc(64001).toString('base64') }, 'whole 16-bit'],
    ] as const) {
      const r = await stt(body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject(env(10001));
      expect(r.body.error_message).toContain(field);
    }
  });

  it('a missing key is 401 10003; a key without the capability too', async () => {
    const r = await stt({ audio_data: foreign(2500).toString('base64') }, null);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject(env(10003));
    const t = await stt({ audio_data: foreign(2500).toString('base64') }, 'emulator-tts-only-key');
    expect(t.status).toBe(401);
  });

  it('an exhausted balance is 402 20003; the price is charged per audio second', async () => {
    const r = await stt({ audio_data: foreign(2500).toString('base64') }, 'emulator-broke-key');
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject(env(20003));
    await ctl.putAccount('stt-paying', { balance_micro: 10_000 });
    const ok = await stt({ audio_data: foreign(4000).toString('base64') }, 'stt-paying');
    expect(ok.status).toBe(200);
    expect((await ctl.account('stt-paying')).body.balance_micro).toBe(10_000 - 4 * 500);
  });

  it('faults give 429 10014 and 500 10000', async () => {
    const a = await stt({ audio_data: foreign(2500).toString('base64') }, KEY, { 'x-emulator-fault': 'status=429' });
    expect(a.status).toBe(429);
    expect(a.body).toMatchObject(env(10014));
    const b = await stt({ audio_data: foreign(2500).toString('base64') }, KEY, { 'x-emulator-fault': 'status=500' });
    expect(b.status).toBe(500);
    expect(b.body).toMatchObject(env(10000));
  });

  it("the account's requests_per_minute gives 429 10014 until the window reopens on the clock", async () => {
    await ctl.freeze(true);
    await ctl.putAccount('stt-limited', { limits: { requests_per_minute: 2 } });
    const pcm = foreign(2500).toString('base64');
    expect((await stt({ audio_data: pcm }, 'stt-limited')).status).toBe(200);
    expect((await stt({ audio_data: pcm }, 'stt-limited')).status).toBe(200);
    const third = await stt({ audio_data: pcm }, 'stt-limited');
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject(env(10014));
    await ctl.advance(60_001);
    expect((await stt({ audio_data: pcm }, 'stt-limited')).status).toBe(200);
    await ctl.freeze(false);
  });

  it('accepts a body far above the 1 MB JSON limit (60 s of audio)', async () => {
    const r = await stt({ audio_data: foreign(60_000).toString('base64') });
    expect(r.status).toBe(200);
    expect(r.body.duration_ms).toBe(60_000);
  });
});
