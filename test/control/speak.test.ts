import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { connect, flush, sendFrames, wsUrl } from '../platform/conversation/conversation-helpers.js';

const { emu, ctl } = emulatorForFile();
const KEY = 'caller-key';
const TEXT = 'I would like to change my booking to Friday morning.';

async function speak(body: Record<string, unknown>) {
  const res = await fetch(`${emu.speechUrl}/_emulator/speak`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) };
}

/** The platform's recognition of PCM16 16 kHz audio, as a client sends it. */
async function recognize(pcm: Buffer): Promise<string> {
  const r = await call(`${emu.platformUrl}/v1/speech-to-text`, {
    json: { audio_data: pcm.toString('base64'), audio_format: 'pcm16' },
    headers: { 'x-api-key': KEY },
  });
  expect(r.status).toBe(200);
  return r.body.text;
}

/** Root mean square of PCM16 bytes. */
function rms(pcm: Buffer): number {
  let s = 0;
  for (let i = 0; i < pcm.length; i += 2) s += pcm.readInt16LE(i) ** 2;
  return Math.sqrt(s / (pcm.length / 2));
}

// Each impairment at its documented limit (docs/voice-agents.md): the emulator still hears exactly what was said.
const AT_LIMITS: [string, Record<string, unknown>][] = [
  ['clean', {}],
  ['noise at 6 dB SNR', { noise_db: 6 }],
  ['36 dB too quiet', { gain_db: -36 }],
  ['clipped by 24 dB of overdrive', { clip: 24 }],
  ['20 dropouts of 200 ms', { dropouts: 20, dropout_ms: 200 }],
  ['through 8 kHz μ-law', { codec: 'mulaw' }],
  ['through MP3 at 32 kbps', { codec: 'mp3' }],
  ['a second of leading silence', { leading_silence_ms: 1000 }],
  ['all at once', { noise_db: 12, gain_db: -20, dropouts: 5, codec: 'mulaw', leading_silence_ms: 500 }],
];

describe("speak: a caller's audio with a bad line", () => {
  it.each(AT_LIMITS)('%s: recognised exactly over HTTP', async (_name, impairments) => {
    const r = await speak({ text: TEXT, ...impairments });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('audio/pcm;rate=16000');
    expect(r.headers.get('x-emulator-signature')).toMatch(/^[0-9a-f]{16}$/);
    expect(Number(r.headers.get('x-audio-duration-ms'))).toBe(Math.round((r.bytes.length / 2 / 16000) * 1000));
    expect(await recognize(r.bytes)).toBe(TEXT);
  });

  it('each impairment does what it says: level, clipping, noise floor, dropouts, leading silence', async () => {
    const clean = (await speak({ text: TEXT })).bytes;
    const quiet = (await speak({ text: TEXT, gain_db: -20 })).bytes;
    expect(rms(quiet) / rms(clean)).toBeCloseTo(0.1, 2);
    const clipped = await speak({ text: TEXT, clip: 12 });
    expect(JSON.parse(clipped.headers.get('x-emulator-impairments')!).clippedSamples).toBeGreaterThan(1000);
    let full = 0;
    for (let i = 0; i < clipped.bytes.length; i += 2) if (Math.abs(clipped.bytes.readInt16LE(i)) >= 32767) full++;
    expect(full).toBeGreaterThan(1000);
    const late = (await speak({ text: TEXT, leading_silence_ms: 700 })).bytes;
    expect(late.length - clean.length).toBe(700 * 16 * 2);
    expect(late.subarray(0, 700 * 32).every((b) => b === 0)).toBe(true);
    const dropped = await speak({ text: TEXT, dropouts: 3, dropout_ms: 100 });
    const at = JSON.parse(dropped.headers.get('x-emulator-impairments')!).dropoutsAtMs as number[];
    expect(at).toHaveLength(3);
    for (const ms of at) {
      expect(ms).toBeGreaterThanOrEqual(560);
      const from = Math.round((ms + 1) * 16) * 2;
      expect(dropped.bytes.subarray(from, from + 3072).every((b) => b === 0)).toBe(true);
    }
    // Noise fills the silences between words; the clean audio's silences are digital zero.
    const noisy = (await speak({ text: TEXT, noise_db: 10 })).bytes;
    const tail = (b: Buffer) => rms(b.subarray(b.length - 3200));
    expect(tail(clean)).toBeLessThan(10);
    expect(tail(noisy)).toBeGreaterThan(100);
  });

  it('the same request and seed give the same bytes; another seed other noise', async () => {
    const a = await speak({ text: TEXT, noise_db: 15, dropouts: 4, seed: 's1' });
    const b = await speak({ text: TEXT, noise_db: 15, dropouts: 4, seed: 's1' });
    const c = await speak({ text: TEXT, noise_db: 15, dropouts: 4, seed: 's2' });
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(a.bytes.equals(c.bytes)).toBe(false);
  });

  it('formats decode as they claim: WAV and MP3 at the asked rate, μ-law at 8 kHz', async () => {
    for (const [format, rate, codec] of [
      ['wav', 16000, 'pcm_s16le'],
      ['mp3', 24000, 'mp3'],
      ['pcmu_wav', 8000, 'pcm_mulaw'],
    ] as const) {
      const r = await speak({ text: TEXT, format, ...(format === 'pcmu_wav' ? {} : { sample_rate: rate }), noise_db: 20 });
      expect(r.status, format).toBe(200);
      expect(r.headers.get('x-audio-sample-rate')).toBe(String(rate));
      const probe = await ffprobe(r.bytes);
      expect(probe.codec, format).toBe(codec);
      expect(probe.sampleRate, format).toBe(rate);
      expect(probe.channels, format).toBe(1);
      expect(Math.abs(probe.durationMs - Number(r.headers.get('x-audio-duration-ms'))), format).toBeLessThan(format === 'mp3' ? 120 : 5);
    }
  });

  it('the conversation socket hears a noisy, dropped, μ-law caller exactly', async () => {
    await ctl.putAccount(KEY, { balance_micro: 10_000_000 });
    const r = await speak({ text: TEXT, noise_db: 12, dropouts: 4, codec: 'mulaw' });
    const c = await connect(wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream', KEY));
    c.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
    await c.waitFor('session_created');
    await sendFrames(c.ws, r.bytes);
    await flush(c.ws);
    c.sendJson({ is_final: true });
    await c.waitFor('done');
    expect(c.events().find((e) => e.type === 'asr_final').asr_text).toBe(TEXT);
    c.ws.close();
  });

  it('the typed client speaks: the audio and what its headers say, recognised exactly', async () => {
    const spoken = await emu.control.speak({ text: TEXT, noise_db: 15, dropouts: 2 });
    expect(spoken.contentType).toBe('audio/pcm;rate=16000');
    expect(spoken.sampleRate).toBe(16000);
    expect(spoken.durationMs).toBe(Math.round((spoken.bytes.length / 2 / 16000) * 1000));
    expect(spoken.impairments.dropoutsAtMs).toHaveLength(2);
    expect(await recognize(Buffer.from(spoken.bytes))).toBe(TEXT);
    await expect(emu.control.speak({ text: '' })).rejects.toThrow(/speak field text/);
  });

  it('bad input is 400 naming the field and the rule', async () => {
    for (const [body, words] of [
      [{}, 'speak field text'],
      [{ text: TEXT, noise_db: 3 }, 'noise_db'],
      [{ text: TEXT, gain_db: 5 }, 'gain_db'],
      [{ text: TEXT, gain_db: -37 }, 'gain_db'],
      [{ text: TEXT, codec: 'gsm' }, 'codec'],
      [{ text: TEXT, voice_id: 'nobody' }, 'speak field voice_id: "nobody" is not a system voice'],
      [{ text: TEXT, format: 'pcmu_raw', sample_rate: 16000 }, 'sample_rate: μ-law (pcmu_raw) is 8000 Hz'],
      [{ text: TEXT, loud: true }, 'loud'],
    ] as const) {
      const r = await speak(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json().error.message, JSON.stringify(body)).toContain(words);
    }
  });
});
