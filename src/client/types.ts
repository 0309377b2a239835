/**
 * The control plane's wire shapes (`/_emulator`), as the control client sends and reads them. Written
 * out here so the public types name no internals; test/client/types.test.ts checks at compile time that
 * each request shape equals the schema the control plane validates with, and each answer the view it
 * builds, so the two cannot drift apart. One file per control area in client/types/ (accounts, faults, the
 * journal with speak and verify, fixtures); the smaller areas are here.
 */
import type { AccountView } from './types/accounts.js';
import type { FixtureName } from './types/fixtures.js';

export type * from './types/accounts.js';
export type * from './types/faults.js';
export type * from './types/journal.js';
export type * from './types/fixtures.js';
export type * from './types/report.js';

// ---- health -------------------------------------------------------------------------------------

/** `GET /_emulator/health`: the service URLs only when the token was presented (or none is set). */
export interface HealthView {
  status: 'ok';
  version: string;
  ready: boolean;
  services?: { speech: string; speech_backup: string; platform: string };
}

/** `GET /_emulator/readyz`: 200 when ready, 503 while starting or closing. */
export interface ReadyView {
  status: 'ready' | 'starting' | 'closing' | (string & {});
  version: string;
}

// ---- reset --------------------------------------------------------------------------------------

export interface ResetAllResult {
  reset: 'all';
  /** With `fixtures: true`: the fixture files that had been replaced at run time and are now restored. */
  fixtures_restored?: FixtureName[];
}

export interface ResetAccountResult {
  reset: 'account';
  /** The key, redacted. */
  account: string;
}

// ---- clock --------------------------------------------------------------------------------------

export interface ClockView {
  now_ms: number;
  frozen: boolean;
}

/** `POST /_emulator/clock`: applied in this order: freeze, set, advance, unfreeze. */
export interface ClockChange {
  /** Moves the clock forward; timers that fall due fire at once. */
  advance_ms?: number;
  freeze?: boolean;
  /** Sets the clock (ms since the epoch), up to the end of year 9999. */
  set_ms?: number;
}

// ---- state --------------------------------------------------------------------------------------

export interface StateAccountView extends AccountView {
  /** Each service area's resources of this account (voices, files, tasks, sessions, ...). */
  resources: Record<string, unknown>;
  /** `buffered_bytes`: sent and not yet read by the client (held under the per-socket bound, docs/robustness.md). */
  open_websockets: { path: string; opened_at_ms: number; buffered_bytes: number }[];
  pending_timers: { label: string; due_ms: number }[];
}

export interface StateView {
  now_ms: number;
  frozen: boolean;
  /** One page of accounts (1,000 unless `limit` says otherwise), ordered by a stable id. */
  accounts: StateAccountView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
  totals: {
    /** Accounts the emulator keeps (all pages). */
    accounts: number;
    open_websockets: number;
    pending_timers: number;
    journal_entries: number;
    fault_rules: number;
    signature_records: number;
  };
}

// ---- documents ----------------------------------------------------------------------------------

export type OpenApiName = 'speech' | 'platform' | 'control';

// ---- hear ---------------------------------------------------------------------------------------

/** A word heard in the recording, with its times in the recording. */
export interface HeardWordView {
  word: string;
  start_ms: number;
  end_ms: number;
}

/** `POST /_emulator/hear`: what a listener heard in a recording. */
export interface HearResult {
  duration_ms: number;
  /** The heard words of all utterances, joined by spaces (the recognition fixture's text when no utterance was found). */
  text: string;
  /** Word error rate of all utterances heard against what was synthesized; null when none of the emulator's syntheses was found. */
  word_error_rate: number | null;
  /** The emulator's own syntheses found in the recording, in the order heard. */
  utterances: {
    trace_id: string | null;
    journal_id: string | null;
    signature_id: string;
    full_text: string;
    heard_text: string;
    /** Word error rate of `heard_text` against `full_text` (0: every word heard). */
    word_error_rate: number;
    complete: boolean;
    start_ms: number;
    end_ms: number;
    words: HeardWordView[];
  }[];
  /** What differs from what was synthesized, in the order found. */
  anomalies: { kind: 'gap' | 'repeat' | 'missing' | 'cut'; at_ms: number; duration_ms: number; trace_id: string | null }[];
  /** What the line did to the audio: levels, noise, clipping, dropouts, leading silence (docs/voice-agents.md). */
  line: HeardLine;
  /** False for audio without a signature of this emulator (replayed from a tape of the real service, made elsewhere). */
  own: boolean;
  /** Why the words are not aligned, for audio that is not the emulator's own. */
  note?: string;
}

export interface HeardLine {
  /** The speech's RMS level over its words (dBFS). */
  level_dbfs: number | null;
  /** The noise's RMS level in the pauses (dBFS); null when the pauses are digital silence. */
  noise_dbfs: number | null;
  /** Speech against noise (dB); null without noise. */
  snr_db: number | null;
  /** Samples at full scale next to another at full scale. */
  clipped_samples: number;
  /** Silence before the first utterance's signature (ms). */
  leading_silence_ms: number;
  /** What was found: noise (SNR under 40 dB), low_level (under −35 dBFS), clipping (10 samples or more), each dropout, leading_silence (100 ms or more). */
  impairments: {
    kind: 'noise' | 'low_level' | 'clipping' | 'dropout' | 'leading_silence';
    at_ms: number;
    duration_ms?: number;
    value?: number;
  }[];
}

/** One way an answer of the emulator differs from the recorded one (`tapes check`). */
export interface TapeDifference {
  /** What differs: `status`, `code`, `message`, `field`, `events`, `close`, `audio`, or `exchange` (it failed). */
  what: string;
  /** A field's path, or the audio's property (`duration_ms`, `sample_rate`, `channels`, `format`). */
  where?: string;
  recorded: unknown;
  emulator: unknown;
}

/** `POST /_emulator/tapes/check`: each tape of a folder sent again to the emulator, and where its answer differs. */
export interface TapesCheckReport {
  /** `12 tapes checked: 10 the same, 2 differ`. */
  summary: string;
  tapes: number;
  differing: number;
  results: { id: string; operation: string; differences: TapeDifference[] }[];
}

/** `PUT /_emulator/tapes/replay`: a folder of tapes to replay from now on (`--replay`, `--replay-strict`, `--replay-speed`). */
export interface TapesReplayRequest {
  dir: string;
  /** A request no tape matches is refused in its operation's error shape (default false: the emulator answers it). */
  strict?: boolean;
  /** Replayed streams at this multiple of the recorded pace, 0 to 1000 (0: as fast as they can go; default 1). */
  speed?: number;
}

/** `GET /_emulator/tapes/replay`: the tapes in effect, loaded at start (`--record`, `--replay`) or by `tapesReplay`. */
export interface TapesView {
  /** `replay`, `record` or `record-missing` while tapes are in effect; null when none are. */
  mode: 'record' | 'record-missing' | 'replay' | null;
  dir: string | null;
  strict: boolean;
  speed: number | null;
  /** How many tapes the folder holds. */
  tapes: number;
}

// ---- raw answers --------------------------------------------------------------------------------

/** One answer as it came, whatever its status (`ControlClient.request`, the `onReply` option). */
export interface ControlReply {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  /** The body as UTF-8 text. */
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  body: unknown;
  /** The whole URL called. */
  url: string;
  /** `METHOD /_emulator/...` */
  request: string;
}
