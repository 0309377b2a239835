import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pcm16Wav } from '../helpers/audio.js';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ freeze: true });
const KEY = 'detect-key';

/** A 16 kHz mono PCM16 WAV of a tone with some deterministic noise (not emulator audio). */
function wav(seconds: number, seed = 1): Buffer {
  const n = seconds * 16000;
  const b = pcm16Wav(n * 2);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const v = 0.3 * Math.sin((2 * Math.PI * 180 * i) / 16000) + 0.05 * (x / 2147483648 - 0.5);
    b.writeInt16LE(Math.round(v * 32767), 44 + i * 2);
  }
  return b;
}

function byUrl(audio_url: unknown, key: string | null = KEY, base = emu.platformUrl) {
  return call(`${base}/v1/audio/ai-detect`, { json: { audio_url }, headers: key ? { 'x-api-key': key } : {} });
}

async function byFile(bytes: Buffer | Blob, name: string, field = 'audio', key = KEY, base = emu.platformUrl) {
  const form = new FormData();
  form.append(field, bytes instanceof Blob ? bytes : new Blob([bytes]), name);
  const r = await call(`${base}/v1/audio/ai-detect`, { method: 'POST', body: form, headers: { 'x-api-key': key } });
  return { status: r.status, text: r.text, body: r.body, type: r.headers.get('content-type') };
}

const ok = (data: unknown) => ({ error_code: 0, error_message: '', succeed: true, data });
const bad = (code: number) => ({ error_code: code, succeed: false, data: null });

describe('verdicts', () => {
  it('emulator audio is Fake with high confidence: a podcast by its audioUrl and as an uploaded file', async () => {
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, { json: { dialogueText: 'Is this real?\nNot at all.' }, headers: { 'x-api-key': KEY } });
    const r = await byUrl(pod.body.data.audioUrl);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(ok({ prediction: 'Fake', descriptor: 'Definitely' }));
    expect(r.body.data.confidence).toMatch(/^0\.9[5-9]\d\d$/);
    const mp3 = Buffer.from(await (await fetch(pod.body.data.audioUrl)).arrayBuffer());
    const f = await byFile(mp3, 'podcast.mp3');
    expect(f.body.data.prediction).toBe('Fake');
  });

  it('synthesized WAV uploaded as a file is Fake', async () => {
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'female_bright', generate_text: 'Made by a machine.' }),
    });
    const f = await byFile(Buffer.from(await res.arrayBuffer()), 'tts.wav');
    expect(f.body).toMatchObject(ok({ prediction: 'Fake', descriptor: 'Definitely' }));
  });

  it('other audio is Real with a stable four-decimal confidence and the descriptor of its band', async () => {
    const r = await byUrl('https://cdn.emulator.test/audio/ref-5s.wav');
    expect(r.body).toMatchObject(ok({ prediction: 'Real' }));
    const again = await byUrl('https://cdn.emulator.test/audio/ref-5s.wav');
    expect(again.body.data).toEqual(r.body.data);
    for (const seed of [1, 2, 3]) {
      const d = (await byFile(wav(3, seed), `x${seed}.wav`)).body.data;
      expect(d.prediction).toBe('Real');
      expect(d.confidence).toMatch(/^(0\.[5-9]\d{3}|1\.0000)$/);
      const c = Number(d.confidence);
      expect(d.descriptor).toBe(c > 0.9 ? 'Definitely' : c >= 0.7 ? 'Likely' : 'Unsure, but leaning');
    }
  });

  it('fixture rules by SHA-256 of the file decide, with the spec thresholds for the descriptor', async () => {
    const files = [1, 2, 3, 4, 5].map((s) => wav(3, 100 + s));
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const rules = [
      { sha256: sha(files[0]!), prediction: 'Fake', confidence: 0.9001 },
      { sha256: sha(files[1]!), prediction: 'Real', confidence: 0.9 },
      { sha256: sha(files[2]!), prediction: 'Fake', confidence: 0.7 },
      { sha256: sha(files[3]!), prediction: 'Real', confidence: 0.6999 },
      { sha256: sha(files[4]!), prediction: 'Real', confidence: 1 },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'det-'));
    writeFileSync(join(dir, 'detection.json'), JSON.stringify({ rules }));
    const other = await startTestEmulator({ fixturesDir: dir });
    try {
      const want = [
        ['Fake', '0.9001', 'Definitely'],
        ['Real', '0.9000', 'Likely'],
        ['Fake', '0.7000', 'Likely'],
        ['Real', '0.6999', 'Unsure, but leaning'],
        ['Real', '1.0000', 'Definitely'],
      ];
      for (let i = 0; i < files.length; i++) {
        const d = (await byFile(files[i]!, `f${i}.wav`, 'audio', KEY, other.platformUrl)).body.data;
        expect([d.prediction, d.confidence, d.descriptor]).toEqual(want[i]);
      }
    } finally {
      await other.close();
    }
  });
});

describe('request rules', () => {
  it.each([
    [undefined, 'audio_url is required'],
    [42, 'audio_url must be a string'],
    ['ftp://cdn.emulator.test/audio/ref-5s.wav', 'http or https'],
    ['https://cdn.emulator.test/audio/ref-5s.flac', '.wav or .mp3'],
    ['http://127.0.0.1:9/a.wav', 'public'],
    ['https://nowhere.example.com/a.wav', 'could not be downloaded'],
    ['https://cdn.emulator.test/audio/broken.mp3', 'audio_url'],
  ])('audio_url %j → 10001 (%s), HTTP 200', async (url, message) => {
    const r = await byUrl(url);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(bad(10001));
    expect(r.body.error_message).toContain(message);
  });

  it('an expired podcast audioUrl is refused with 10001', async () => {
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, { json: { dialogueText: 'Expiring soon.' }, headers: { 'x-api-key': 'detect-exp' } });
    await ctl.advance(3_600_001);
    const r = await byUrl(pod.body.data.audioUrl);
    expect(r.body).toMatchObject(bad(10001));
    expect(r.body.error_message).toContain('expired');
  });

  it('multipart: the file must be in field audio, named .wav/.mp3, not empty, parseable', async () => {
    const wrong = await byFile(wav(3), 'a.wav', 'file');
    expect(wrong.body).toMatchObject(bad(10001));
    expect(wrong.body.error_message).toContain('field named audio');
    expect((await byFile(wav(3), 'a.flac')).body.error_message).toContain('.wav or .mp3');
    expect((await byFile(Buffer.alloc(0), 'a.wav')).body.error_message).toContain('empty');
    const junk = await byFile(Buffer.from('this is not audio at all, just text'), 'a.mp3');
    expect(junk.body).toMatchObject(bad(10001));
    const both = new FormData();
    both.append('file', new Blob([wav(3, 9)]), 'other.wav');
    both.append('audio', new Blob([wav(3, 9)]), 'right.wav');
    const r = await fetch(`${emu.platformUrl}/v1/audio/ai-detect`, { method: 'POST', body: both, headers: { 'x-api-key': KEY } });
    expect(((await r.json()) as { error_code: number }).error_code).toBe(0);
    const form = new FormData();
    form.append('note', 'no file');
    const none = await fetch(`${emu.platformUrl}/v1/audio/ai-detect`, { method: 'POST', body: form, headers: { 'x-api-key': KEY } });
    expect(((await none.json()) as { error_code: number }).error_code).toBe(10001);
  });

  it('a file over 50 MB is HTTP 413 without the envelope', async () => {
    const big = new Blob([Buffer.alloc(50 * 1024 * 1024 + 1)]);
    const r = await byFile(big, 'big.wav');
    expect(r.status).toBe(413);
    expect(r.body?.error_code).toBeUndefined();
    expect(r.text).not.toContain('error_code');
  });

  it('a wrong method is HTTP 405 without the envelope', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(`${emu.platformUrl}/v1/audio/ai-detect`, { method, headers: { 'x-api-key': KEY } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.text()).not.toContain('error_code');
    }
  });

  it('key, capability and balance: 10003 and 20003 with HTTP 200; price per audio second', async () => {
    const missing = await byUrl('https://cdn.emulator.test/audio/ref-5s.wav', null);
    expect([missing.status, missing.body.error_code]).toEqual([200, 10003]);
    expect((await byUrl('https://cdn.emulator.test/audio/ref-5s.wav', 'emulator-tts-only-key')).body.error_code).toBe(10003);
    const broke = await byUrl('https://cdn.emulator.test/audio/ref-5s.wav', 'emulator-broke-key');
    expect([broke.status, broke.body.error_code]).toEqual([200, 20003]);
    await ctl.putAccount('detect-paying', { balance_micro: 100_000 });
    expect((await byFile(wav(4), 'four.wav', 'audio', 'detect-paying')).body.error_code).toBe(0);
    expect((await ctl.account('detect-paying')).body.balance_micro).toBe(100_000 - 4 * 500);
  });

  it('an internal error is reachable by fault', async () => {
    const r = await call(`${emu.platformUrl}/v1/audio/ai-detect`, {
      json: { audio_url: 'https://cdn.emulator.test/audio/ref-5s.wav' },
      headers: { 'x-api-key': KEY, 'x-emulator-fault': 'code=10000' },
    });
    expect([r.status, r.body.error_code]).toEqual([200, 10000]);
  });
});
