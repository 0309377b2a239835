/**
 * AI-audio detection. Verdict: audio carrying the emulator's signature → `Fake` with a confidence of
 * 0.9500–0.9989; else a detection fixture rule by SHA-256 of the file; else `Real` with a confidence
 * of 0.5000–0.9999 taken from the content hash (same file, same answer).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';
import { chargeOrRefuse, priceOf } from '../shared/billing.js';
import { fetchUrl, readInputAudio, type InputAudio } from '../shared/input-audio.js';
import { DETECTION_EXTENSIONS, type DetectionData } from './schema.js';

export function descriptorOf(confidence: string): DetectionData['descriptor'] {
  const c = Number(confidence);
  if (c > 0.9) return 'Definitely';
  if (c >= 0.7) return 'Likely';
  return 'Unsure, but leaning';
}

function fromHash(sha256: string, min: number, spread: number): number {
  return min + (parseInt(sha256.slice(0, 8), 16) % spread) / 10_000;
}

export function verdictOf(emu: Emulator, audio: InputAudio): DetectionData {
  let prediction: DetectionData['prediction'];
  let value: number;
  const rule = emu.fixtures.data['detection.json'].rules.find((r) => r.sha256 === audio.sha256);
  if (audio.signatureId) {
    prediction = 'Fake';
    value = fromHash(audio.sha256, 0.95, 490);
  } else if (rule) {
    prediction = rule.prediction;
    value = rule.confidence;
  } else {
    prediction = 'Real';
    value = fromHash(audio.sha256, 0.5, 5000);
  }
  const confidence = Math.min(1, Math.max(0.5, value)).toFixed(4);
  return { prediction, confidence, descriptor: descriptorOf(confidence) };
}

/** `.wav`/`.mp3` by the name's extension (URL path or file name), else a parameter error naming `field`. */
export function checkExtension(field: string, name: string): void {
  const lower = name.toLowerCase();
  if (!DETECTION_EXTENSIONS.some((e) => lower.endsWith(e))) throw new PlatformError('param', `${field} must be a .wav or .mp3 file`);
}

/**
 * JSON mode: checks `audio_url`, in order: present, a URL, http/https, .wav/.mp3 (10001 each), and
 * fetches it through the offline resolver (10001 naming the field when it cannot).
 */
export async function fetchDetectionUrl(emu: Emulator, raw: string | null | undefined): Promise<{ bytes: Buffer; name: string; contentType?: string }> {
  if (raw === undefined || raw === null || raw === '') throw new PlatformError('param', 'audio_url is required (or send the file as multipart field audio)');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new PlatformError('param', 'audio_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PlatformError('param', 'audio_url must be an http or https URL');
  checkExtension('audio_url', url.pathname);
  return fetchUrl(emu, 'audio_url', raw.trim());
}

/** What the multipart mode received in field `audio` (the route reads the parts). */
export type Upload =
  { kind: 'file'; bytes: Buffer; name: string; contentType: string } | { kind: 'too-large' } | { kind: 'wrong-field'; field: string } | { kind: 'none' };

/**
 * Multipart mode: the file in field `audio`, not empty, named .wav/.mp3 (10001 each). An oversize
 * file is not checked here: it answers the spec's bare 413 before any envelope.
 */
export function checkUpload(upload: Exclude<Upload, { kind: 'too-large' }>): { bytes: Buffer; name: string; contentType: string } {
  if (upload.kind === 'wrong-field') throw new PlatformError('param', `the file must be sent in the multipart field named audio, not ${upload.field}`);
  if (upload.kind === 'none') throw new PlatformError('param', 'no audio: send the file in the multipart field audio');
  if (upload.bytes.length === 0) throw new PlatformError('param', 'audio is an empty file');
  checkExtension('audio', upload.name);
  return upload;
}

/** Decodes, charges `detection_audio_second` and answers the verdict. */
export async function detect(emu: Emulator, account: Account, field: string, bytes: Buffer, name: string, contentType?: string): Promise<DetectionData> {
  const audio = await readInputAudio(emu, field, bytes, { filename: name, contentType }, ['wav', 'mp3']);
  chargeOrRefuse(emu, account, priceOf(emu.fixtures.data['billing.json'].prices_micro.detection_audio_second, audio.durationMs), 'detection');
  return verdictOf(emu, audio);
}
