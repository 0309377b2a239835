import type { ProbeHint, ProbeResult } from './types.js';

export type AudioProbeErrorCode = 'unsupported' | 'undecodable' | 'empty';

/** Input audio that cannot be read: `code` says whether the format is unknown or the data broken. */
export class AudioProbeError extends Error {
  readonly code: AudioProbeErrorCode;
  constructor(code: AudioProbeErrorCode, message: string) {
    super(message);
    this.name = 'AudioProbeError';
    this.code = code;
  }
}

export async function probeAudio(_bytes: Buffer, _hint: ProbeHint = {}): Promise<ProbeResult> {
  throw new Error('not implemented yet');
}
export async function decodeToMono(
  _bytes: Buffer,
  _hint: ProbeHint = {},
): Promise<{ samples: Float32Array; sampleRate: number }> {
  throw new Error('not implemented yet');
}
