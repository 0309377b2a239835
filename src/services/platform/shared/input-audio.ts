/**
 * Audio handed to detection, diarization and recognition: fetched (URL or object key), probed (its
 * duration from the headers) and its first seconds decoded to mono, with what the emulator knows of it
 * (its own signature record and where its audio starts). The whole file is decoded only by a rule that
 * needs it (the energy detector), slice by slice. Problems are parameter errors (10001) naming the field.
 */
import { createHash } from 'node:crypto';
import { ActivityMeter } from '../../../audio/activity.js';
import { monoSlices } from '../../../audio/decode-slices.js';
import { decodeSourceOf } from '../../../audio/probe.js';
import { AudioProbeError, decodeToMono, probeAudio, type ActivitySpan, type ProbedFormat } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord } from '../../../core/state/signatures.js';
import { readSignature } from '../../../audio/index.js';
import { fetchRemote, readObjectKey } from '../../shared/remote.js';
import { PlatformError } from '../envelope.js';

export interface InputAudio {
  bytes: Buffer;
  /** SHA-256 of the file bytes as received (what the fixtures' `sha256` match). */
  sha256: string;
  format: ProbedFormat;
  /** The first HEAD_SECONDS as mono float (where the signature and its onset are read). */
  samples: Float32Array;
  sampleRate: number;
  /** Duration from the file's headers (never by decoding it). */
  durationMs: number;
  /** The non-silent stretches of the whole audio, decoded in slices (what the energy detector needs). */
  activity(): Promise<ActivitySpan[]>;
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

/** Seconds decoded from the start: the signature sits in the first 1.7 s. */
export const HEAD_SECONDS = 3;

function refusal(field: string, err: AudioProbeError): PlatformError {
  const what = err.code === 'unsupported' ? 'is not in a supported audio format' : err.code === 'empty' ? 'is empty' : 'could not be parsed as audio';
  return new PlatformError('param', `${field} ${what}`);
}

/**
 * Probes, refuses audio longer than `maxSeconds` (by its declared duration, before decoding) and
 * decodes its head; unreadable audio is a parameter error naming `field`.
 */
export async function readInputAudio(
  emu: Emulator,
  field: string,
  bytes: Buffer,
  hint: { filename?: string; contentType?: string },
  accept?: readonly ProbedFormat[],
  maxSeconds = Infinity,
): Promise<InputAudio> {
  let format: ProbedFormat;
  let decoded: { samples: Float32Array; sampleRate: number };
  let durationMs: number;
  try {
    const probe = await probeAudio(bytes, hint);
    format = probe.format;
    if (accept && !accept.includes(format)) throw new PlatformError('param', `${field}: ${format} audio is not supported (only ${accept.join(', ')})`);
    if (probe.durationMs > maxSeconds * 1000)
      throw new PlatformError('param', `${field} audio lasts ${(probe.durationMs / 1000).toFixed(1)} s, longer than the ${maxSeconds} s this operation reads`);
    decoded = await decodeToMono(bytes, hint, Math.ceil(HEAD_SECONDS * probe.sampleRate));
    durationMs = probe.durationMs;
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    if (err instanceof AudioProbeError) throw refusal(field, err);
    throw err;
  }
  const { samples, sampleRate } = decoded;
  if (!(durationMs > 0)) durationMs = (samples.length * 1000) / sampleRate;
  const activity = async (): Promise<ActivitySpan[]> => {
    const meter = new ActivityMeter(sampleRate);
    try {
      // Bounded by the declared duration (plus a second): a header that lies does not buy more work.
      for await (const slice of monoSlices(decodeSourceOf(bytes, hint), Math.ceil((durationMs / 1000 + 1) * sampleRate))) meter.push(slice.samples);
    } catch (err) {
      if (err instanceof AudioProbeError) throw refusal(field, err);
      throw new PlatformError('param', `${field} could not be parsed as audio`);
    }
    return meter.spans();
  };
  const signatureId = readSignature(samples, sampleRate);
  return {
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    format,
    samples,
    sampleRate,
    durationMs,
    activity,
    signatureId,
    record: emu.signatures.get(signatureId),
  };
}

/** Where the emulator's audio starts inside samples: one rule with the recognizer (services/shared). */
export { signatureOffsetMs } from '../../shared/recognize.js';
