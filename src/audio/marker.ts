export function readSignature(_samples: Float32Array, _sampleRate: number): string | null {
  throw new Error('not implemented yet');
}
