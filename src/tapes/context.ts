/** What the hook, the recorder and the replayer share of the running tapes. */
import { createHash } from 'node:crypto';
import type { Emulator } from '../core/emulator.js';
import type { TapeDeclarations } from '../core/service.js';
import type { FreshValues } from './fresh.js';
import type { MatchKey, TapeIndex } from './match.js';
import type { TapeStore } from './store.js';
import type { Upstream } from './upstream.js';

export type TapesMode = 'record' | 'record-missing' | 'replay';

export interface TapesOptions {
  mode: TapesMode;
  dir: string;
  /** Replaying: a request no tape matches is refused instead of answered by the emulator. */
  strict: boolean;
  /** Replayed streams at this multiple of the recorded pace; 0: as fast as they can be written. */
  speed: number;
  /** Recording: the real services by listener (the backup falls back to the speech one). */
  upstreams: { speech?: string; 'speech-backup'?: string; platform?: string };
  /** Recording: each tape holds the account of the key that made it, and answers only that account. */
  perAccount: boolean;
  /** Each service's declarations of its operations (core/service.ts `tapes`). */
  declarations: Record<'speech' | 'platform', TapeDeclarations>;
}

/** What the recorder and the replayer share of the running tapes. */
export interface TapesContext {
  readonly emu: Emulator;
  readonly options: TapesOptions;
  readonly store: TapeStore;
  readonly index: TapeIndex;
  readonly fresh: FreshValues;
  readonly upstream: Upstream;
  /** Tapes answered in this run (what `tapes prune` keeps). */
  readonly used: Set<string>;
  /** Per request key: how many times it was recorded, or replayed, in this run (the n-th call gets `seq` n). */
  readonly recordedTimes: Map<string, number>;
  readonly replayedTimes: Map<string, number>;
}

export function keyText(key: MatchKey): string {
  return JSON.stringify([key.service, key.operation, key.account, [...key.fields.entries()].sort(([a], [b]) => a.localeCompare(b))]);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
