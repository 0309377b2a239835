import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { sendJson } from '../../../core/http.js';
import { chargeOrRefuse, priceOf } from '../shared/billing.js';
import { PlatformError } from '../envelope.js';
import { recognizePcm } from './model.js';
import { AUDIO_FORMATS, BODY_LIMIT, MAX_AUDIO_BYTES, MIN_AUDIO_BYTES, RECOGNITION_RATE } from './schema.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes strict Base64 (standard or URL-safe alphabet, padding optional); null when malformed. */
export function decodeBase64(s: string): Buffer | null {
  const clean = s.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (!BASE64.test(clean) || clean.length % 4 === 1) return null;
  return Buffer.from(clean, 'base64');
}

/**
 * `POST /v1/speech-to-text`: success is the bare transcription object; errors are the envelope with an
 * HTTP status (400 10001/20014, 401, 402, 429, 500), from the `recognition` family.
 */
export async function recognitionRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  app.post('/v1/speech-to-text', { bodyLimit: BODY_LIMIT, config: { family: 'recognition', capability: 'recognition' } }, async (req, reply) => {
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new PlatformError('param', 'request body must be a JSON object with audio_data');
    const { audio_data, audio_format, language } = body;
    if (audio_data === undefined || audio_data === null || audio_data === '') throw new PlatformError('param', 'audio_data is required');
    if (typeof audio_data !== 'string') throw new PlatformError('param', 'audio_data must be a Base64 string');
    if (audio_format !== undefined && audio_format !== null && !(AUDIO_FORMATS as readonly unknown[]).includes(audio_format)) {
      throw new PlatformError('param', `audio_format must be pcm16 or pcm_16000, got ${JSON.stringify(audio_format)}`);
    }
    if (language !== undefined && language !== null && (typeof language !== 'string' || language.length > 16)) {
      throw new PlatformError('param', 'language must be a language code string');
    }
    const pcm = decodeBase64(audio_data);
    if (!pcm) throw new PlatformError('param', 'audio_data is not valid Base64');
    if (pcm.length > MAX_AUDIO_BYTES) throw new PlatformError('param', 'audio_data holds more than 50 MB of audio');
    if (pcm.length % 2 !== 0) throw new PlatformError('param', 'audio_data must hold whole 16-bit samples (an even number of bytes)');
    if (pcm.length < MIN_AUDIO_BYTES) {
      throw new PlatformError(20014, `audio_data is ${Math.round((pcm.length / 2 / RECOGNITION_RATE) * 1000)} ms of PCM; at least 2000 ms (16 kHz mono PCM16) is required`);
    }
    const samples = new Int16Array(pcm.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2);
    const durationMs = (samples.length * 1000) / RECOGNITION_RATE;
    const account = req.emu.account!;
    const price = priceOf(emu.fixtures.data['billing.json'].prices_micro.recognition_audio_second, durationMs);
    if (!emu.accounts.canAfford(account, price)) throw new PlatformError('balance', 'insufficient balance for recognition');
    // The account's requests_per_minute (accounts fixture or control plane), when set, limits recognition too.
    const rpm = account.limits.requests_per_minute;
    if (rpm && !emu.limits.hit(emu.windowKey(account, 'recognition:requests'), 60_000, rpm).allowed) {
      throw new PlatformError('rate', `request rate exceeded: at most ${rpm} recognition requests per minute for this API key`);
    }
    chargeOrRefuse(emu, account, price, 'recognition');
    const result = recognizePcm(emu, samples, RECOGNITION_RATE, typeof language === 'string' && language.trim() ? { language: language.trim() } : {});
    return sendJson(reply, 200, result);
  });
}
