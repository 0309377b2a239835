/**
 * Audio handed to detection, diarization and recognition: fetched (URL or object key), probed and
 * decoded to mono, with what the emulator knows of it (its own signature record and where its audio
 * starts). Problems are parameter errors (10001) that name the field.
 */
import { createHash } from 'node:crypto';
import { AudioProbeError, decodeToMono, probeAudio, type ProbedFormat } from '../../../audio/index.js';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord } from '../../../core/signatures.js';
import { readSignature } from '../../../audio/index.js';
import { fetchRemote, readObjectKey } from '../../shared/remote.js';
import { PlatformError } from '../envelope.js';

export interface InputAudio {
  bytes: Buffer;
  /** SHA-256 of the file bytes as received (what the fixtures' `sha256` match). */
  sha256: string;
  format: ProbedFormat;
  samples: Float32Array;
  sampleRate: number;
  /** Duration as a decoder measures it. */
  durationMs: number;
  /** The signature id found in the audio (emulator-made audio), or null. */
  signatureId: string | null;
  record?: SignatureRecord;
}

/** Fetches a URL through the offline resolver; failures become 10001 naming `field`. */
export async function fetchUrl(emu: Emulator, field: string, url: string): Promise<{ bytes: Buffer; name: string; contentType?: string }> {
  const got = await fetchRemote(emu, url);
  if (!got.ok) throw new PlatformError('param', `${field} ${got.message}`);
  return got;
}

/** Reads an object key of the account (uploads or podcasts); another account's key is not found. */
export async function fetchObjectKey(emu: Emulator, account: Account, field: string, key: string): Promise<{ bytes: Buffer; name: string }> {
  const bytes = await readObjectKey(emu, account, key);
  if (!bytes) throw new PlatformError('param', `${field} does not name a file of this API key`);
  return { bytes, name: key.split('/').pop() ?? key };
}

/** Probes and decodes; unreadable audio is a parameter error naming `field`. */
export async function readInputAudio(
  emu: Emulator,
  field: string,
  bytes: Buffer,
  hint: { filename?: string; contentType?: string },
  accept?: readonly ProbedFormat[],
): Promise<InputAudio> {
  let format: ProbedFormat;
  let decoded: { samples: Float32Array; sampleRate: number };
  let durationMs: number;
  try {
    const probe = await probeAudio(bytes, hint);
    format = probe.format;
    if (accept && !accept.includes(format)) throw new PlatformError('param', `${field}: ${format} audio is not supported (only ${accept.join(', ')})`);
    decoded = await decodeToMono(bytes, hint);
    durationMs = probe.durationMs;
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    if (err instanceof AudioProbeError) {
      const what = err.code === 'unsupported' ? 'is not in a supported audio format' : err.code === 'empty' ? 'is empty' : 'could not be parsed as audio';
      throw new PlatformError('param', `${field} ${what}`);
    }
    throw err;
  }
  const { samples, sampleRate } = decoded;
  if (!(durationMs > 0)) durationMs = (samples.length * 1000) / sampleRate;
  const signatureId = readSignature(samples, sampleRate);
  return {
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    format,
    samples,
    sampleRate,
    durationMs,
    signatureId,
    record: emu.signatures.get(signatureId),
  };
}

/** Where the emulator's audio starts inside samples: one rule with the recognizer (services/shared). */
export { signatureOffsetMs } from '../../shared/recognize.js';
