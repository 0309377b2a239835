/**
 * Output formats of speech synthesis (speech-current.md E12-E15): the rate each format is made at,
 * which formats take `voice_modify`, whether the Opus encoder is there, the Ogg serial number of a
 * new stream and the file name extension of each format. The encoders themselves live in
 * audio/encode/; this file holds only the rules of the speech service.
 */
import { opusEncoderProblem, type AudioFormat } from '../../audio/index.js';
import type { Account } from '../../core/state/accounts.js';
import type { Emulator } from '../../core/emulator.js';
import { invalidParams } from './errors.js';
import { SAMPLE_RATES } from './schema.js';

/** G.711 μ-law is 8 kHz by definition: any rate of the general enum is replaced by it. */
export const PCMU_RATE = 8000;
/** Opus on HTTP and the sockets (E12): the rates the real service was seen to take. */
export const OPUS_RATES = [8000, 16000, 24000] as const;
/** Opus on async (the async page): any other rate makes the task fail. */
export const ASYNC_OPUS_RATES = [8000, 12000, 16000, 24000, 48000] as const;
/** An absent rate for Opus: the official CLI's default (the documented 32000 is no Opus rate). */
export const OPUS_DEFAULT_RATE = 24000;
export const DEFAULT_RATE = 32000;
/** The formats `voice_modify` changes (non-streaming); a stream changes only mp3. */
export const MODIFIABLE_FORMATS: readonly AudioFormat[] = ['mp3', 'wav', 'flac'];

export const isMulaw = (format: AudioFormat) => format === 'pcmu_raw' || format === 'pcmu_wav';

/**
 * The rate a request's audio is made at on HTTP and the sockets: μ-law always 8000, Opus one of its
 * three rates (24000 when absent), any other format the requested rate (32000 when absent).
 * `asyncRate` is the rate async synthesis settled for its task (it has its own Opus rule).
 */
export function outputRate(format: AudioFormat, requested: number | null | undefined, asyncRate?: number): number {
  if (format !== 'opus' && requested != null && !(SAMPLE_RATES as readonly number[]).includes(requested))
    throw invalidParams(`audio_setting.sample_rate must be one of ${SAMPLE_RATES.join(', ')}`);
  if (isMulaw(format)) return PCMU_RATE;
  if (asyncRate !== undefined) return asyncRate;
  if (format !== 'opus') return requested ?? DEFAULT_RATE;
  const rate = requested ?? OPUS_DEFAULT_RATE;
  if (!(OPUS_RATES as readonly number[]).includes(rate))
    throw invalidParams(`audio_setting.sample_rate ${rate} is not supported for opus; use 8000, 16000 or 24000`);
  return rate;
}

/** Opus needs its encoder: when it could not be loaded, the request is 2013 naming it. */
export function checkEncoder(format: AudioFormat): void {
  if (format !== 'opus') return;
  const problem = opusEncoderProblem();
  if (problem) throw invalidParams(`audio_setting.format opus cannot be served: ${problem}`);
}

/** Whether `voice_modify` changes the audio of this format (elsewhere it is accepted and ignored). */
export function voiceModifyApplies(format: AudioFormat, stream: boolean): boolean {
  return stream ? format === 'mp3' : MODIFIABLE_FORMATS.includes(format);
}

/**
 * The serial number of a new Ogg stream, from the account's seeded ids (a stream of its own, so
 * Opus requests never shift the other ids); undefined for formats without Ogg.
 */
export function oggSerialFor(emu: Emulator, account: Account, format: AudioFormat): number | undefined {
  return format === 'opus' ? emu.ids.stream(`${account.id}:ogg`).bytes(4).readUInt32LE(0) : undefined;
}

/** The extension of a file of this format (download links, async archives). */
export function fileExtension(format: AudioFormat): string {
  return format === 'pcmu_wav' ? 'wav' : format === 'pcmu_raw' ? 'pcmu' : format;
}
