/**
 * The reference audio of a voice save: fetched from an object key of the same account or a public URL,
 * then probed for real. Codes: 10001 for a bad address, 20012 for audio that cannot be had or read.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { AudioProbeError, probeAudio, type ProbeResult } from '../../../audio/index.js';
import { fetchRemote, ownsObjectKey, readObjectKey } from '../../shared/remote.js';
import { PlatformError } from '../envelope.js';

/** 50 MB in the spec's unit (decimal megabytes). */
export const MAX_REF_BYTES = 50_000_000;
export const MAX_REF_MS = 30_000;
/** Common formats the reference audio may use (the spec names MP3, WAV, M4A). */
export const REF_FORMATS = ['wav', 'mp3', 'm4a', 'flac', 'aac', 'ogg'] as const;

export interface Reference {
  bytes: Buffer;
  name: string;
  probe: ProbeResult;
}

const unreadable = (message: string) => new PlatformError(20012, `ref_audio: ${message}`);
/** 20015: reference audio over 30 s. */
const tooLong = (durationMs: number) => new PlatformError(20015, `ref_audio: reference audio lasts ${(durationMs / 1000).toFixed(1)} s, longer than 30 s`);

async function fetchReference(emu: Emulator, account: Account, ref: string): Promise<{ bytes: Buffer; name: string; contentType?: string }> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) {
    const got = await fetchRemote(emu, ref);
    if (got.ok) return got;
    if (got.problem === 'not-http' || got.problem === 'not-public') throw new PlatformError('param', `ref_audio: URL ${got.message}`);
    throw unreadable(`URL ${got.message}`);
  }
  if (!/^uploads\/[a-z]+\/[0-9a-f]+\/[^/]+$/.test(ref)) {
    throw new PlatformError('param', 'ref_audio: must be a public http(s) URL or an object_key returned by /v1/files/upload');
  }
  const missing = unreadable('object_key was not uploaded with this API key, or no longer exists');
  if (!ownsObjectKey(account, ref)) throw missing;
  const size = await emu.blobs.size(ref).catch(() => null);
  if (size === null) throw missing;
  if (size > MAX_REF_BYTES) throw tooLarge(size);
  const bytes = await readObjectKey(emu, account, ref);
  if (!bytes) throw missing;
  return { bytes, name: ref.split('/').pop()! };
}

function tooLarge(size: number): PlatformError {
  return unreadable(`reference audio is ${size} bytes, more than the 50 MB limit`);
}

const CONTAINERS: Record<string, ProbeResult['format']> = {
  wave: 'wav',
  mpeg: 'mp3',
  flac: 'flac',
  ogg: 'ogg',
  m4a: 'm4a',
  mp4: 'm4a',
  isom: 'm4a',
  adts: 'aac',
};

/** The audio engine's probe; music-metadata stands in while the engine's probe is not available. */
async function probe(bytes: Buffer, filename: string, contentType?: string): Promise<ProbeResult> {
  try {
    return await probeAudio(bytes, { filename, contentType });
  } catch (err) {
    if (err instanceof AudioProbeError) throw err;
  }
  try {
    const { parseBuffer } = await import('music-metadata'); // loaded on first use (start-up time)
    const { format } = await parseBuffer(bytes, contentType ? { mimeType: contentType } : undefined, { duration: true });
    const container = (format.container ?? '').toLowerCase().split(/[/ ]/)[0] ?? '';
    const kind = CONTAINERS[container];
    if (!kind || !format.sampleRate || !format.duration) throw new AudioProbeError('undecodable', 'no audio stream could be read');
    return { format: kind, sampleRate: format.sampleRate, channels: format.numberOfChannels ?? 1, durationMs: Math.round(format.duration * 1000) };
  } catch (err) {
    if (err instanceof AudioProbeError) throw err;
    throw new AudioProbeError('unsupported', (err as Error).message);
  }
}

/** Fetches and probes a reference audio; throws the code the spec gives for each failure. */
export async function loadReference(emu: Emulator, account: Account, ref: string): Promise<Reference> {
  const got = await fetchReference(emu, account, ref);
  if (got.bytes.length > MAX_REF_BYTES) throw tooLarge(got.bytes.length);
  if (got.bytes.length === 0) throw unreadable('reference audio is empty');
  let probed: ProbeResult;
  try {
    probed = await probe(got.bytes, got.name, got.contentType);
  } catch (err) {
    throw unreadable(`audio format unsupported or file damaged (${(err as Error).message})`);
  }
  if (!(REF_FORMATS as readonly string[]).includes(probed.format)) {
    throw unreadable(`audio format ${probed.format} is not supported; use ${REF_FORMATS.join(', ')}`);
  }
  if (!(probed.durationMs > 0)) throw unreadable('reference audio holds no sound');
  if (probed.durationMs > MAX_REF_MS) {
    throw tooLong(probed.durationMs);
  }
  return { bytes: got.bytes, name: got.name, probe: probed };
}
