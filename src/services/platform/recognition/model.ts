/**
 * Rules of `POST /v1/speech-to-text`, after the route's schema (schema.ts, 10001), in order: the audio's Base64, size and
 * sample alignment (10001), its length (20014 under 2 s), the balance (20003), the account's request
 * window (10014), the charge, then the recognizer (services/shared/recognize.ts). Errors are PlatformError of
 * the `recognition` family, which gives them their HTTP statuses. The stream's end (`finishStream`) has
 * its own: at least 2 s (20014), then the balance (20003).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { chargeOrRefuse, priceOf } from '../shared/billing.js';
import { PlatformError } from '../envelope.js';
import { nextTurn } from '../../../audio/event-loop.js';
import { recognizeInSlices, type Recognition } from '../../shared/recognize.js';
import { recognitionPrice } from '../shared/recognition-price.js';
import { durationMs, MAX_UTTERANCE_MS, recognizeUtterance, type Utterance } from '../shared/utterance.js';
import { MAX_AUDIO_BYTES, MIN_AUDIO_BYTES, RECOGNITION_RATE, type SpeechToTextRequest } from './schema.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Characters of `audio_data` checked and decoded at a time (1 Mi: about 10 ms of work), with a turn of the event loop between. */
const BASE64_SLICE = 1 << 20;
/** Samples converted at a time, with a turn of the event loop between. */
const SAMPLE_SLICE = 1 << 20;

/**
 * Decodes strict Base64 (standard or URL-safe alphabet, padding optional, whitespace ignored); null when
 * malformed. Works in slices so that 66 MB of text does not hold the event loop: each slice is checked
 * with what was left of the one before (a partial group of four, the padding), whole groups are decoded.
 */
export async function decodeBase64(text: string): Promise<Buffer | null> {
  const out = Buffer.alloc(Math.ceil(text.length / 4) * 3);
  let written = 0;
  let cleanLength = 0;
  let carry = '';
  for (let at = 0; at < text.length; at += BASE64_SLICE) {
    const clean = text
      .slice(at, at + BASE64_SLICE)
      .replace(/\s+/g, '')
      .replace(/-/g, '+')
      .replace(/_/g, '/');
    cleanLength += clean.length;
    const part = carry + clean;
    // Padding may only end the whole text: once seen, it stays in the carry and anything after fails here.
    if (!BASE64.test(part)) return null;
    const pad = part.indexOf('=');
    const groups = pad < 0 ? part.length : pad;
    const whole = groups - (groups % 4);
    written += out.write(part.slice(0, whole), written, 'base64');
    carry = part.slice(whole);
    await nextTurn();
  }
  if (cleanLength % 4 === 1) return null;
  written += out.write(carry, written, 'base64');
  return out.subarray(0, written);
}

function badParam(message: string): PlatformError {
  return new PlatformError('param', message);
}

/** 20014: the audio is shorter than the recognizer accepts. */
function audioTooShort(message: string): PlatformError {
  return new PlatformError(20014, message);
}

/** The PCM16 samples of `audio_data`: valid Base64, at most 50 MB, whole samples, at least 2 s. */
async function samplesOf(audioData: string): Promise<Int16Array> {
  const pcm = await decodeBase64(audioData);
  if (!pcm) throw badParam('audio_data is not valid Base64');
  if (pcm.length > MAX_AUDIO_BYTES) throw badParam('audio_data holds more than 50 MB of audio');
  if (pcm.length % 2 !== 0) throw badParam('audio_data must hold whole 16-bit samples (an even number of bytes)');
  if (pcm.length < MIN_AUDIO_BYTES) {
    // Whole milliseconds rounded down: audio a sample short of 2 s never reads as 2000 ms.
    throw audioTooShort(`audio_data is ${Math.floor((pcm.length / 2 / RECOGNITION_RATE) * 1000)} ms of PCM; at least 2000 ms (16 kHz mono PCM16) is required`);
  }
  const samples = new Int16Array(pcm.length / 2);
  for (let from = 0; from < samples.length; from += SAMPLE_SLICE) {
    const end = Math.min(samples.length, from + SAMPLE_SLICE);
    for (let i = from; i < end; i++) samples[i] = pcm.readInt16LE(i * 2);
    await nextTurn();
  }
  return samples;
}

/** One recognition request of an admitted account: every rule above, then the transcript. */
export async function recognizeRequest(emu: Emulator, account: Account, request: SpeechToTextRequest): Promise<Recognition> {
  const samples = await samplesOf(request.audio_data);
  const language = request.language?.trim();
  const durationMs = (samples.length * 1000) / RECOGNITION_RATE;
  const price = priceOf(emu.fixtures.data['billing.json'].prices_micro.recognition_audio_second, durationMs);
  if (!emu.accounts.canAfford(account, price)) throw new PlatformError('balance', 'insufficient balance for recognition');
  // The account's requests_per_minute (accounts fixture or control plane), when set, limits recognition too.
  const rpm = account.limits.requests_per_minute;
  if (rpm && !emu.limits.hit(emu.windowKey(account, 'recognition:requests'), 60_000, rpm).allowed) {
    throw new PlatformError('rate', `request rate exceeded: at most ${rpm} recognition requests per minute for this API key`);
  }
  chargeOrRefuse(emu, account, price, 'recognition');
  return recognizeInSlices(emu, samples, RECOGNITION_RATE, language ? { language } : {});
}

/**
 * The stream's message rules, in order (10001): the first message is meta (`is_final` or audio before it
 * is refused), then PCM up to MAX_UTTERANCE_MS in all, then `is_final` (finishStream).
 */
export function streamBeforeMeta(what: 'is_final' | 'audio'): PlatformError {
  return new PlatformError(
    'param',
    what === 'is_final' ? 'meta: the first message must be {meta:{audio_format, language}}, not is_final' : 'binary audio arrived before the meta message',
  );
}

/** The audio a stream has carried so far: refused past MAX_UTTERANCE_MS, else null. */
export function streamAudioRefusal(utterance: Utterance): PlatformError | null {
  return durationMs(utterance) > MAX_UTTERANCE_MS ? new PlatformError('param', `audio: a stream may carry at most ${MAX_UTTERANCE_MS / 1000} s`) : null;
}

/** The stream's minimum length of recognised PCM. */
export const MIN_STREAM_AUDIO_MS = 2000;

/**
 * The end of a recognition stream's audio (`is_final`): at least 2 s of PCM (20014), a balance that pays
 * for it (20003), then the transcript of the whole utterance, charged.
 */
export function finishStream(emu: Emulator, account: Account, utterance: Utterance, language?: string): Recognition {
  const ms = durationMs(utterance);
  if (ms < MIN_STREAM_AUDIO_MS) throw audioTooShort(`audio is shorter than ${MIN_STREAM_AUDIO_MS / 1000} seconds (${Math.floor(ms)} ms of PCM received)`);
  const price = recognitionPrice(emu, ms / 1000);
  if (!emu.accounts.canAfford(account, price)) throw new PlatformError('balance', 'insufficient balance for recognition');
  const result = recognizeUtterance(emu, utterance, language);
  emu.accounts.charge(account, price);
  emu.markDirty('accounts', account.id, account.id);
  return result;
}
