import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { ffmpegPcm16 } from '../../helpers/ffprobe.js';

/**
 * `POST /v1/speech-to-text` checks, decodes and recognizes long audio in slices (1 Mi characters of
 * Base64, 1 Mi samples) with turns of the event loop between: the answers are those of one pass,
 * whatever falls on a slice's edge (whitespace, padding, a bad character, the only loud sample).
 */
const { emu } = emulatorForFile();
const KEY = 'recognition-slices';
const SLICE_CHARS = 1 << 20;
const env = (code: number) => ({ error_code: code, succeed: false, data: null });

function stt(base: string, audio_data: string, extra: Record<string, unknown> = {}) {
  return call(`${base}/v1/speech-to-text`, { json: { audio_data, ...extra }, headers: { 'x-api-key': KEY } });
}

/** Deterministic tone with noise of `ms` at 16 kHz, as PCM16 LE. */
function foreign(ms: number, seed = 1): Buffer {
  const n = (ms * 16000) / 1000;
  const b = Buffer.alloc(n * 2);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    b.writeInt16LE(Math.round(32767 * (0.2 * Math.sin((2 * Math.PI * 220 * i) / 16000) + 0.1 * (x / 2147483648 - 0.5))), i * 2);
  }
  return b;
}

/** Base64 broken into MIME lines of 76 characters (CRLF), so line breaks fall across slice edges. */
const mimeLines = (b64: string) => b64.replace(/.{76}/g, '$&\r\n');

describe('long recognition input, checked and decoded in slices', () => {
  it('the emulator own speech padded to 4 minutes is recognized whole, as plain, URL-safe and MIME-wrapped Base64', async () => {
    const text = 'A long recording, padded with silence after the words.';
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'male_calm', generate_text: text, language: 'en' }),
    });
    expect(res.status).toBe(200);
    const speech = await ffmpegPcm16(Buffer.from(await res.arrayBuffer()), { ext: 'wav' });
    const pcm = Buffer.concat([speech, Buffer.alloc(240 * 16000 * 2 - speech.length)]);
    const plain = pcm.toString('base64');
    expect(plain.length).toBeGreaterThan(2 * SLICE_CHARS);
    for (const audio of [plain, pcm.toString('base64url'), mimeLines(plain)]) {
      const r = await stt(emu.platformUrl, audio);
      expect([r.status, r.body]).toEqual([200, { text, language: 'en', confidence: 0.98, duration_ms: 240_000 }]);
    }
  });

  it('silence over several slices is empty text; one loud sample in the last slice makes it audio', async () => {
    const quiet = Buffer.alloc(150 * 16000 * 2);
    expect((await stt(emu.platformUrl, quiet.toString('base64'))).body).toEqual({ text: '', language: 'en', confidence: 0, duration_ms: 150_000 });
    quiet.writeInt16LE(20_000, quiet.length - 2);
    const loud = await stt(emu.platformUrl, quiet.toString('base64'));
    expect(loud.status).toBe(200);
    expect(loud.body.text).not.toBe('');
  });

  it('a fixture rule by SHA-256 matches 150 s of PCM (the hash is taken slice by slice)', async () => {
    const pcm = foreign(150_000, 5);
    const dir = mkdtempSync(join(tmpdir(), 'fx-slices-'));
    const sha = createHash('sha256').update(pcm).digest('hex');
    writeFileSync(
      join(dir, 'recognition.json'),
      JSON.stringify({ rules: [{ sha256: sha, text: 'by hash, long', language: 'en', confidence: 0.9 }], defaults: [{ text: 'default' }] }),
    );
    const other = await startTestEmulator({ fixturesDir: dir });
    try {
      const r = await stt(other.platformUrl, mimeLines(pcm.toString('base64')));
      expect(r.body).toEqual({ text: 'by hash, long', language: 'en', confidence: 0.9, duration_ms: 150_000 });
    } finally {
      await other.close();
    }
  });

  it('a bad character or padding in a later slice, or odd bytes, is 10001 as before', async () => {
    const plain = foreign(200_000, 2).toString('base64');
    const at = (i: number, s: string) => plain.slice(0, i) + s + plain.slice(i + s.length);
    const cases: [string, string][] = [
      [at(SLICE_CHARS + 1000, '*'), 'audio_data is not valid Base64'],
      [at(SLICE_CHARS - 2, '=='), 'audio_data is not valid Base64'], // padding that ends the first slice, data after it
      [at(2 * SLICE_CHARS, '='), 'audio_data is not valid Base64'],
      [`${plain}A`, 'audio_data is not valid Base64'], // one character over a group of four
      [Buffer.alloc(100_001).toString('base64'), 'audio_data must hold whole 16-bit samples (an even number of bytes)'],
    ];
    for (const [audio, message] of cases) {
      const r = await stt(emu.platformUrl, audio);
      expect([r.status, r.body]).toEqual([400, { ...env(10001), error_message: message }]);
    }
  });
});
