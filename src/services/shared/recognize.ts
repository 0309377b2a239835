/**
 * The recognizer shared by HTTP recognition and the WebSocket areas (streaming recognition,
 * conversation). Rules, in order:
 * 1. silence (peak below about -50 dBFS) → empty text;
 * 2. audio the emulator synthesized (its signature, read from the samples even after resampling)
 *    → the text that was spoken, from the signature record;
 * 3. the recognition fixture: a rule by SHA-256 of the PCM16 bytes, then a rule by duration range,
 *    then a default picked by the content hash (same audio, same answer).
 */
import { createHash } from 'node:crypto';
import { readSignature } from '../../audio/index.js';
import { nextTurn } from '../../audio/event-loop.js';
import type { Emulator } from '../../core/emulator.js';
import type { SignatureRecord } from '../../core/state/signatures.js';

export interface Recognition {
  text: string;
  language: string;
  confidence: number;
  duration_ms: number;
}

/** Which rule answered (for logs and tests; never on the wire). */
export type RecognitionSource = 'silence' | 'signature' | 'fixture-hash' | 'fixture-duration' | 'fixture-default';

export interface RecognizeOptions {
  /** The caller's language; echoed when given (no auto-detection then). */
  language?: string;
}

/** Peak under which audio counts as silence (≈ -50 dBFS, 103 in PCM16). */
const SILENCE_PEAK = 0.00316;
/** A record's whole text is returned when the audio reaches its end within this tolerance. */
const END_TOLERANCE_MS = 300;

export function toFloat(samples: Float32Array | Int16Array): Float32Array {
  if (samples instanceof Float32Array) return samples;
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! / 32768;
  return out;
}

/** The PCM16 little-endian bytes of the samples (what the fixture's hashes are computed over). */
export function pcm16Bytes(samples: Float32Array | Int16Array): Buffer {
  if (samples instanceof Int16Array) {
    const b = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    return b;
  }
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]!));
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32768))), i * 2);
  }
  return out;
}

export function isSilent(samples: Float32Array): boolean {
  for (let i = 0; i < samples.length; i++) if (Math.abs(samples[i]!) >= SILENCE_PEAK) return false;
  return true;
}

/**
 * Language of a text the emulator spoke or heard: `zh` when it has any Han character, else `en`;
 * `emptyText` when there is nothing to judge. (Synthesis plans its voice by the Han majority instead:
 * speech/text.ts `languageByHanMajority`.)
 */
export function languageByAnyHan(text: string, emptyText = 'en'): string {
  if (!text.trim()) return emptyText;
  return /\p{Script=Han}/u.test(text) ? 'zh' : 'en';
}

/** What a signature record says up to `durationMs` of its audio (all of it when the audio is whole). */
export function spokenText(record: SignatureRecord, durationMs: number): string {
  const whole = durationMs >= record.durationMs - END_TOLERANCE_MS;
  if (whole && record.kind === 'speech') return record.text.trim();
  const segments = whole ? record.segments : record.segments.filter((s) => s.endMs <= durationMs);
  return segments
    .map((s) => s.text.trim())
    .filter(Boolean)
    .join(' ');
}

/** Lead silence of the signature burst (marker.ts layout: 30 ms silence, then tones at 0.3). */
const SIGNATURE_LEAD_MS = 30;

/**
 * Where the emulator's audio starts inside the samples, in ms: decoders add encoder delay (MP3) and
 * users may trim or pad. Found from the onset of the signature burst, which starts 30 ms in.
 */
export function signatureOffsetMs(samples: Float32Array, sampleRate: number): number {
  const end = Math.min(samples.length, Math.round(1.5 * sampleRate));
  let peak = 0;
  for (let i = 0; i < end; i++) peak = Math.max(peak, Math.abs(samples[i]!));
  // Relative to the loudest sample, so audio turned down by the user is measured the same way.
  const threshold = Math.max(0.01, 0.3 * peak);
  for (let i = 0; i < end; i++) {
    if (Math.abs(samples[i]!) > threshold) return (i * 1000) / sampleRate - SIGNATURE_LEAD_MS;
  }
  return 0;
}

/** The emulator's own audio: the signature record of the samples, if any. */
export function findRecord(emu: Emulator, samples: Float32Array, sampleRate: number): SignatureRecord | undefined {
  return emu.signatures.get(readSignature(samples, sampleRate));
}

/** The transcript of mono samples at any rate ≥ 6 kHz: exactly `{text, language, confidence, duration_ms}`. */
export function recognizePcm(emu: Emulator, samples: Float32Array | Int16Array, sampleRate: number, opts: RecognizeOptions = {}): Recognition {
  const { source: _source, ...result } = recognizeWithSource(emu, samples, sampleRate, opts);
  return result;
}

export function recognizeWithSource(
  emu: Emulator,
  samples: Float32Array | Int16Array,
  sampleRate: number,
  opts: RecognizeOptions = {},
): Recognition & { source: RecognitionSource } {
  const float = toFloat(samples);
  const facts = {
    durationMs: Math.round((samples.length * 1000) / sampleRate),
    silent: isSilent(float),
    head: float,
    hash: () => createHash('sha256').update(pcm16Bytes(samples)).digest('hex'),
  };
  return answerOf(emu, facts, sampleRate, opts);
}

/** Samples per slice of `recognizeInSlices` (about 1 MB of PCM16: a few ms of work each). */
const RECOGNIZE_SLICE = 1 << 19;
/** The head the signature rules read (the search spans its first 1.2 s plus the burst; the onset 1.5 s). */
const SIGNATURE_HEAD_S = 10;

/**
 * The same answer as `recognizePcm` for long audio (minutes to hours), with a turn of the event loop
 * between slices of the silence scan and the hash, so other requests run meanwhile; only the head the
 * signature rules read is converted to float.
 */
export async function recognizeInSlices(
  emu: Emulator,
  samples: Float32Array | Int16Array,
  sampleRate: number,
  opts: RecognizeOptions = {},
): Promise<Recognition> {
  let silent = true;
  for (let from = 0; from < samples.length && silent; from += RECOGNIZE_SLICE) {
    silent = isSilent(toFloat(samples.subarray(from, from + RECOGNIZE_SLICE)));
    await nextTurn();
  }
  const head = toFloat(samples.subarray(0, SIGNATURE_HEAD_S * sampleRate));
  // The content hash is read only by the fixture rules, after silence and the signature.
  let digest = '';
  if (!silent && !findRecord(emu, head, sampleRate)) {
    const hash = createHash('sha256');
    for (let from = 0; from < samples.length; from += RECOGNIZE_SLICE) {
      hash.update(pcm16Bytes(samples.subarray(from, from + RECOGNIZE_SLICE)));
      await nextTurn();
    }
    digest = hash.digest('hex');
  }
  const facts = { durationMs: Math.round((samples.length * 1000) / sampleRate), silent, head, hash: () => digest };
  const { source: _source, ...result } = answerOf(emu, facts, sampleRate, opts);
  return result;
}

/** What the rules read of the audio: its length, whether it is silent, its head, its content hash. */
interface AudioFacts {
  durationMs: number;
  silent: boolean;
  head: Float32Array;
  hash: () => string;
}

/** The rules, in order (see the top of this file). */
function answerOf(emu: Emulator, facts: AudioFacts, sampleRate: number, opts: RecognizeOptions): Recognition & { source: RecognitionSource } {
  const duration_ms = facts.durationMs;
  const lang = (detected: string) => opts.language || detected;

  if (facts.silent) return { text: '', language: lang('en'), confidence: 0, duration_ms, source: 'silence' };

  const record = findRecord(emu, facts.head, sampleRate);
  if (record) {
    // What was heard of the recorded audio: its duration less where it starts (decoder delay, padding).
    const text = spokenText(record, duration_ms - Math.max(0, signatureOffsetMs(facts.head, sampleRate)));
    return { text, language: lang(record.language ?? languageByAnyHan(text)), confidence: 0.98, duration_ms, source: 'signature' };
  }

  const fixture = emu.fixtures.data['recognition.json'];
  const hash = facts.hash();
  const byHash = fixture.rules.find((r) => r.sha256 === hash);
  if (byHash) return { text: byHash.text, language: lang(byHash.language), confidence: byHash.confidence, duration_ms, source: 'fixture-hash' };
  const byDuration = fixture.rules.find(
    (r) =>
      r.sha256 === undefined && (r.min_ms !== undefined || r.max_ms !== undefined) && duration_ms >= (r.min_ms ?? 0) && duration_ms < (r.max_ms ?? Infinity),
  );
  if (byDuration) {
    return { text: byDuration.text, language: lang(byDuration.language), confidence: byDuration.confidence, duration_ms, source: 'fixture-duration' };
  }
  const pick = fixture.defaults[parseInt(hash.slice(0, 8), 16) % fixture.defaults.length]!;
  return { text: pick.text, language: lang(pick.language), confidence: pick.confidence, duration_ms, source: 'fixture-default' };
}
