// `POST /_emulator/speak` with the speech engine chosen: the caller speaks with it (a real voice-activity
// detector hears speech, where the tone engine's caller is not speech to it), and the emulator's recognition,
// its conversation socket and hear still know exactly what was said under each impairment at its limit.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { connect, flush, sendFrames, wsUrl } from '../platform/conversation/conversation-helpers.js';

// Silero VAD, as LiveKit's agents run it (its model is inside the package's native addon).
const { createVad, VAD_WINDOW_SAMPLES } = createRequire(import.meta.url)('@livekit/local-inference') as {
  createVad(): { predict(pcm: Int16Array): Promise<number> };
  VAD_WINDOW_SAMPLES: number;
};

const KEY = 'caller-speech-key';
const TEXT = 'I would like to change my booking to Friday morning, please.';
let speech: RunningEmulator;
let tones: RunningEmulator;

beforeAll(async () => {
  [speech, tones] = await Promise.all([startTestEmulator({ voiceEngine: 'speech' }), startTestEmulator()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([speech?.close(), tones?.close()]);
});

async function speak(emu: RunningEmulator, body: Record<string, unknown>) {
  const res = await fetch(`${emu.speechUrl}/_emulator/speak`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The share of 32 ms windows of PCM16 16 kHz (after the signature) Silero hears as speech. */
async function speechShare(pcm: Buffer): Promise<number> {
  const samples = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
  const vad = createVad();
  const probs: number[] = [];
  for (let i = 0; i + VAD_WINDOW_SAMPLES <= samples.length; i += VAD_WINDOW_SAMPLES) probs.push(await vad.predict(samples.slice(i, i + VAD_WINDOW_SAMPLES)));
  const after = probs.slice(Math.ceil(560 / ((VAD_WINDOW_SAMPLES / 16000) * 1000)));
  return after.filter((p) => p > 0.5).length / after.length;
}

async function recognize(emu: RunningEmulator, pcm: Buffer): Promise<string> {
  const r = await call(`${emu.platformUrl}/v1/speech-to-text`, {
    json: { audio_data: pcm.toString('base64'), audio_format: 'pcm16' },
    headers: { 'x-api-key': KEY },
  });
  expect(r.status).toBe(200);
  return r.body.text;
}

// Each impairment at its documented limit (docs/voice-agents.md), as the tone engine's caller is tested.
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

describe('speak with the speech engine', () => {
  it("Silero hears the caller as speech; the tone engine's caller it does not", async () => {
    const [spoken, beeps] = await Promise.all([speak(speech, { text: TEXT }), speak(tones, { text: TEXT })]);
    expect(spoken).not.toEqual(beeps);
    expect(await speechShare(spoken)).toBeGreaterThan(0.5);
    expect(await speechShare(beeps)).toBeLessThan(0.1);
  });

  it.each(AT_LIMITS)('%s: the recognition finds the exact text', async (_name, impairments) => {
    expect(await recognize(speech, await speak(speech, { text: TEXT, ...impairments }))).toBe(TEXT);
  });

  it('the conversation socket hears a noisy, dropped, μ-law caller exactly', async () => {
    await control(speech.platformUrl).putAccount(KEY, { balance_micro: 10_000_000 });
    const pcm = await speak(speech, { text: TEXT, noise_db: 12, dropouts: 4, codec: 'mulaw' });
    const c = await connect(wsUrl(speech.platformUrl, '/api/v1/audio/conversation/stream', KEY));
    c.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
    await c.waitFor('session_created');
    await sendFrames(c.ws, pcm);
    await flush(c.ws);
    c.sendJson({ is_final: true });
    await c.waitFor('done');
    expect(c.events().find((e) => e.type === 'asr_final').asr_text).toBe(TEXT);
    c.ws.close();
  });

  it.each(AT_LIMITS)('%s: hear finds every word, complete', async (name, impairments) => {
    const pcm = await speak(speech, { text: TEXT, ...impairments });
    const h = await call(`${speech.speechUrl}/_emulator/hear`, { method: 'POST', body: pcm, headers: { 'content-type': 'audio/pcm;rate=16000' } });
    expect(h.status).toBe(200);
    const u = h.body.utterances;
    expect(
      u.map((x: any) => [x.full_text, x.complete, x.word_error_rate]),
      `${name}: ${JSON.stringify(h.body)}`,
    ).toEqual([[TEXT, true, 0]]);
    expect(h.body.anomalies, name).toEqual([]);
  });

  it('a one-word caller ("Yes.", "Thanks!") is heard whole too, clean, noisy and through μ-law', async () => {
    for (const text of ['Yes.', 'Thanks!']) {
      for (const impairments of [{}, { noise_db: 6 }, { codec: 'mulaw' }]) {
        const pcm = await speak(speech, { text, ...impairments });
        const h = await call(`${speech.speechUrl}/_emulator/hear`, { method: 'POST', body: pcm, headers: { 'content-type': 'audio/pcm;rate=16000' } });
        const what = `${text} ${JSON.stringify(impairments)}: ${JSON.stringify(h.body)}`;
        expect(
          h.body.utterances.map((x: any) => [x.heard_text, x.complete, x.word_error_rate]),
          what,
        ).toEqual([[text.replace(/[.!]/g, ''), true, 0]]);
        expect(h.body.anomalies, what).toEqual([]);
      }
    }
  });
});
