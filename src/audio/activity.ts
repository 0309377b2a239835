import type { ActivitySpan } from './types.js';

export interface ActivityOptions {
  /** Gaps shorter than this are bridged (default 200 ms). */
  minGapMs?: number;
  /** Stretches shorter than this are dropped (default 60 ms). */
  minSpanMs?: number;
}

export function speechActivity(_samples: Float32Array, _sampleRate: number, _opts: ActivityOptions = {}): ActivitySpan[] {
  throw new Error('not implemented yet');
}
