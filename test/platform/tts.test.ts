import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSignature } from '../../src/audio/index.js';
import { TAG_S } from '../../src/audio/plan.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { samplesOf, toFloat } from '../helpers/audio.js';
import { api } from './tts-helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile();
let tts: ReturnType<typeof api>;
const KEY = 'tts-key';
const base = { voice_id: 'female_bright', generate_text: 'Hello there, friend.' };

beforeAll(() => {
  tts = api(emu.platformUrl, KEY);
});

const pcmSeconds = (b: Buffer) => b.length / 48000;

describe('synchronous synthesis', () => {
  it('returns a 24 kHz mono 16-bit WAV whose decoded duration equals its data length', async () => {
    const r = await tts('/v1/text-to-speech', { json: base });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('audio/wav');
    expect(r.headers.get('x-audio-sample-rate')).toBe('24000');
    expect(r.headers.get('x-audio-channels')).toBe('1');
    expect(r.headers.get('x-audio-bit-depth')).toBe('16');
    expect(Number(r.headers.get('content-length'))).toBe(r.bytes.length);
    expect(r.bytes.readUInt32LE(4)).toBe(r.bytes.length - 8);
    expect(r.bytes.readUInt32LE(40)).toBe(r.bytes.length - 44);
    const p = await ffprobe(r.bytes, { ext: 'wav' });
    expect(p).toMatchObject({ codec: 'pcm_s16le', sampleRate: 24000, channels: 1, bits: 16 });
    expect((p.streamDurationMs ?? p.durationMs) / 1000).toBeCloseTo((r.bytes.length - 44) / 48000, 3);
    // The audio says what it is: its signature leads to the record of the spoken text.
    const id = readSignature(toFloat(samplesOf(r.bytes.subarray(44))), 24000);
    const record = emu.emulator.signatures.get(id);
    expect(record).toMatchObject({ kind: 'speech', text: base.generate_text, language: 'en' });
    expect(record!.segments.length).toBeGreaterThan(0);
  });

  it('pcm and pcm_s16le give the same samples raw, without a header; empty format gives WAV', async () => {
    const wav = await tts('/v1/text-to-speech', { json: { ...base, audio_format: '' } });
    const pcm = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm' } });
    const s16 = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm_s16le' } });
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect(pcm.headers.get('x-audio-sample-rate')).toBe('24000');
    expect(pcm.bytes.subarray(0, 4).toString()).not.toBe('RIFF');
    expect(pcm.bytes.equals(wav.bytes.subarray(44))).toBe(true);
    expect(s16.bytes.equals(pcm.bytes)).toBe(true);
  });

  it('speed: 0 and absent are 1.0, 0.6 is slower than 1.2; emotion_class is ignored by the standard model', async () => {
    const plain = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm' } });
    const zero = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm', speed: 0, emotion_class: 'happy', model_id: 'std-tts' } });
    expect(zero.bytes.equals(plain.bytes)).toBe(true);
    const slow = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm', speed: 0.6 } });
    const fast = await tts('/v1/text-to-speech', { json: { ...base, audio_format: 'pcm', speed: 1.2 } });
    expect(slow.status).toBe(200);
    expect(pcmSeconds(slow.bytes)).toBeGreaterThan(pcmSeconds(plain.bytes));
    expect(pcmSeconds(fast.bytes)).toBeLessThan(pcmSeconds(plain.bytes));
  });

  it('text_normalization true reads 1234567 as words, which takes longer', async () => {
    const digits = await tts('/v1/text-to-speech', { json: { voice_id: 'male_calm', generate_text: '1234567', audio_format: 'pcm' } });
    const words = await tts('/v1/text-to-speech', { json: { voice_id: 'male_calm', generate_text: '1234567', audio_format: 'pcm', text_normalization: true } });
    expect(pcmSeconds(words.bytes)).toBeGreaterThan(pcmSeconds(digits.bytes) + 0.5);
  });

  it('each of the fourteen tags becomes its own sound; an unknown bracketed word is read', async () => {
    const len = async (text: string) =>
      pcmSeconds((await tts('/v1/text-to-speech', { json: { voice_id: 'male_calm', generate_text: text, audio_format: 'pcm' } })).bytes);
    const plain = await len('Well then');
    const extra = await Promise.all(Object.keys(TAG_S).map(async (tag) => (await len(`Well [${tag}] then`)) - plain - TAG_S[tag as keyof typeof TAG_S]));
    expect(extra).toHaveLength(14);
    for (const e of extra) expect(e).toBeCloseTo(extra[0]!, 2);
    expect((await len('Well [snortz] then')) - plain - TAG_S.snorts).not.toBeCloseTo(extra[0]!, 2);
  });

  it('a Chinese text of 250 characters (weighted 500) is accepted', async () => {
    const r = await tts('/v1/text-to-speech', { json: { voice_id: 'female_warm', generate_text: '你'.repeat(250), audio_format: 'pcm' } });
    expect(r.status).toBe(200);
  });
});

describe('streamed synthesis', () => {
  it('sends chunked WAV with a 0xFFFFFFFF-size header, rendered as sent, equal to the synchronous audio', async () => {
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech/stream`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(base),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('x-audio-sample-rate')).toBe('24000');
    const parts: Buffer[] = [];
    for await (const chunk of res.body!) parts.push(Buffer.from(chunk));
    const all = Buffer.concat(parts);
    expect(parts.length).toBeGreaterThan(1);
    expect(all.subarray(0, 4).toString()).toBe('RIFF');
    expect(all.readUInt32LE(4)).toBe(0xffffffff);
    expect(all.readUInt32LE(40)).toBe(0xffffffff);
    const sync = await tts('/v1/text-to-speech', { json: base });
    expect(all.subarray(44).equals(sync.bytes.subarray(44))).toBe(true);
    const j = await ctl.journal({ path: '/v1/text-to-speech/stream', limit: 1 });
    expect(j.body.entries[0].chunks).toBeGreaterThan(1);
  });

  it('a client that leaves early stops the stream without harming the emulator', async () => {
    const body = JSON.stringify({ voice_id: 'male_calm', generate_text: 'A longer text that takes a while to render. '.repeat(10) });
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${emu.platformUrl}/v1/text-to-speech/stream`,
        { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' } },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      req.end(body);
      setTimeout(() => reject(new Error('no audio')), 10_000).unref();
    });
    await new Promise((r) => setTimeout(r, 100));
    const j = await ctl.journal({ path: '/v1/text-to-speech/stream', limit: 1 });
    expect(j.body.entries[0]).toMatchObject({ status: 200, note: 'client left before the end of the stream' });
    expect((await tts('/v1/text-to-speech', { json: base })).status).toBe(200);
  });

  it('streams raw PCM for audio_format pcm', async () => {
    const r = await tts('/v1/text-to-speech/stream', { json: { ...base, audio_format: 'pcm' } });
    expect(r.headers.get('content-type')).toBe('audio/pcm');
    expect(r.bytes.length % 2).toBe(0);
    expect(r.bytes.length).toBeGreaterThan(0);
  });

  it('cut_after_chunks cuts the connection after that many chunks', async () => {
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech/stream`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=2' },
      body: JSON.stringify(base),
    });
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
    const j = await ctl.journal({ path: '/v1/text-to-speech/stream', limit: 1 });
    expect(j.body.entries[0].chunks).toBe(2);
    expect(j.body.entries[0].note).toMatch(/cut after 2 chunks/);
  });

  it('an error before audio is the JSON envelope with its HTTP status', async () => {
    const r = await tts('/v1/text-to-speech/stream', { json: { ...base, speed: 3 } });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body).toEqual({ error_code: 10001, error_message: expect.stringMatching(/^speed:/), succeed: false, data: null });
  });
});

describe('errors', () => {
  const cases: [string, unknown, RegExp][] = [
    ['missing voice_id', { generate_text: 'hi' }, /^voice_id: is required/],
    ['missing generate_text', { voice_id: 'male_calm' }, /^generate_text: is required/],
    ['blank generate_text', { voice_id: 'male_calm', generate_text: '   ' }, /^generate_text: .*empty/],
    ['501 latin characters', { voice_id: 'male_calm', generate_text: 'a'.repeat(501) }, /^generate_text: weighted length 501 exceeds 500/],
    ['251 Chinese characters (weighted 502)', { voice_id: 'male_calm', generate_text: '你'.repeat(251) }, /weighted length 502/],
    ['text_normalization as a string', { ...base, text_normalization: 'true' }, /^text_normalization: must be a JSON boolean/],
    ['unsupported model_id', { ...base, model_id: 'hd-tts' }, /^model_id: unsupported model "hd-tts"/],
    ['speed above 1.2', { ...base, speed: 1.25 }, /^speed: must be between 0.6 and 1.2/],
    ['speed below 0.6', { ...base, speed: 0.5 }, /^speed:/],
    ['speed as a string', { ...base, speed: '1' }, /^speed: must be a number/],
    ['unknown audio_format', { ...base, audio_format: 'mp3' }, /^audio_format: unsupported format "mp3"/],
    ['unknown voice', { ...base, voice_id: 'nobody' }, /^voice_id: "nobody" is neither/],
    ['a voice of the other service', { ...base, voice_id: 'male-qn-qingse' }, /^voice_id:/],
    ['bad language', { ...base, language: 'english please' }, /^language:/],
    ['a body that is not an object', [1, 2], /request body must be a JSON object/],
  ];
  it.each(cases)('%s → HTTP 400, 10001, naming the field', async (_name, json, message) => {
    const r = await tts('/v1/text-to-speech', { json });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error_code: 10001, error_message: expect.stringMatching(message), succeed: false, data: null });
  });

  it('a body that is not JSON is 400 with 10001', async () => {
    const r = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error_code: number }).error_code).toBe(10001);
  });

  it('a speed beyond the number range (1e400) is 400 naming the rule, not "got a number"', async () => {
    const body = '{"voice_id":"male_calm","generate_text":"hi","speed":1e400}';
    const r = await fetch(`${emu.platformUrl}/v1/text-to-speech`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({ error_code: 10001, error_message: 'speed: must be a number, got a number out of range', succeed: false, data: null });
  });

  it('no key, a disabled key or a key without the tts capability → 401 with 10003', async () => {
    expect((await api(emu.platformUrl, '')('/v1/text-to-speech', { json: base })).status).toBe(401);
    const disabled = await api(emu.platformUrl, 'emulator-disabled-key')('/v1/text-to-speech', { json: base });
    expect(disabled.status).toBe(401);
    expect(disabled.body.error_code).toBe(10003);
    await ctl.putAccount('no-tts-key', { capabilities: ['cloning'] });
    const noCap = await api(emu.platformUrl, 'no-tts-key')('/v1/text-to-speech/stream', { json: base });
    expect(noCap.status).toBe(401);
    expect(noCap.body).toMatchObject({ error_code: 10003, error_message: expect.stringMatching(/tts/), data: null });
  });

  it('charges the weighted length; an exhausted balance is 402 with 20003', async () => {
    await ctl.putAccount('payer-key', { balance_micro: 1_000_000 });
    const r = await api(emu.platformUrl, 'payer-key')('/v1/text-to-speech', {
      json: { voice_id: 'female_warm', generate_text: '你好 ok', audio_format: 'pcm' },
    });
    expect(r.status).toBe(200);
    expect((await ctl.account('payer-key')).body.balance_micro).toBe(1_000_000 - 7 * 100);
    const broke = await api(emu.platformUrl, 'emulator-broke-key')('/v1/text-to-speech', { json: base });
    expect(broke.status).toBe(402);
    expect(broke.body).toMatchObject({ error_code: 20003, succeed: false, data: null });
  });

  it('status faults give the statuses and codes of the table', async () => {
    for (const [status, code] of [
      [429, 10014],
      [500, 10000],
      [402, 20003],
    ] as const) {
      const r = await tts('/v1/text-to-speech', { json: base, headers: { 'x-emulator-fault': `status=${status}` } });
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ error_code: code, succeed: false, data: null });
    }
  });
});
