/**
 * Fault directives and the control plane's fault rules, as the control client sends and reads them
 * (re-exported by src/client/types.ts, held equal to the server by test/client/types.test.ts).
 */

// ---- faults -------------------------------------------------------------------------------------

/** What an endpoint does instead of its work, in its own spec-defined shape. */
export interface FaultDirective {
  /** A spec error code the endpoint answers with. */
  code?: number;
  /** An HTTP status the endpoint answers with. */
  status?: number;
  delay_ms?: number;
  /** Streams stop after this many chunks. */
  cut_after_chunks?: number;
  /** WebSockets close with this code. */
  close_ws?: number;
  /** Pace of an audio stream (docs/voice-agents.md): first audio no sooner than this after the request. */
  ttfa_ms?: number;
  /** Seconds of audio delivered per wall-clock second at most (1: real time). */
  rtf?: number;
  /** Each chunk's send time moves by a seeded amount within ±this. */
  jitter_ms?: number;
  /** One pause of this length once `stall_at_ms` of audio was sent. */
  stall_ms?: number;
  stall_at_ms?: number;
  /** Faults inside the audio (docs/voice-agents.md). */
  drop_final?: number;
  duplicate_chunk?: number;
  hex_odd?: number;
  split_frame?: number;
  gap_ms?: number;
  gap_at_ms?: number;
  corrupt_bytes?: number;
  extra_info_mismatch?: number;
}

export type FaultService = 'speech' | 'speech-backup' | 'platform';

/** `POST /_emulator/faults`: which requests a rule matches, how often, and the fault. */
export interface FaultRuleInput {
  service?: FaultService;
  method?: string;
  path?: string;
  /** An API key: only its requests match. */
  account?: string;
  /** Requests it applies to before it is spent (default 1). */
  times?: number | 'always';
  /** Drawn with the emulator's seed for each matching request. */
  probability?: number;
  fault: FaultDirective;
}

export interface FaultRuleView {
  id: string;
  service?: FaultService;
  method?: string;
  path?: string;
  /** The key, redacted. */
  account?: string;
  times: number | 'always';
  probability?: number;
  fault: FaultDirective;
  remaining: number | 'always';
}

export interface FaultAdded {
  id: string;
  rule: FaultRuleView;
}
