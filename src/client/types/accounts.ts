/**
 * An account as the control plane shows and changes it, as the control client sends and reads it
 * (re-exported by src/client/types.ts, held equal to the server by test/client/types.test.ts).
 */
import type { FaultDirective } from './faults.js';

/** What an account may use (a missing one answers the service's own refusal). */
export type Capability = 'tts' | 'cloning' | 'upload' | 'podcast' | 'calls' | 'recognition' | 'detection' | 'diarization' | 'agents';

// ---- accounts -----------------------------------------------------------------------------------

export interface AccountLimits {
  requests_per_minute?: number;
  characters_per_minute?: number;
  /** Speech-to-text requests a minute (off unless set). */
  speech_to_text_per_minute?: number;
  max_concurrent_calls?: number;
  single_channel?: boolean;
}

/** The bidirectional socket's sentence buffering numbers (absent: the documented defaults). */
export interface BidiSettings {
  min_clause_chars?: number;
  max_sentence_chars?: number;
  silence_ms?: number;
  min_tail_chars?: number;
  backstop_ms?: number;
  max_pending_chars?: number;
}

/** Account-level settings of the speech service. */
export interface SpeechSettings {
  bidi?: BidiSettings;
  /** Speech-to-text: `stream_pace`, the fraction of audio time by which the emulator clock paces its deltas (0: at once). */
  stt?: { stream_pace?: number };
}

/** `PUT /_emulator/accounts/{key}`: the settings to change (the others stay). A limit of null lifts it. */
export interface AccountChange {
  balance_micro?: number;
  free_call_seconds?: number;
  capabilities?: Capability[];
  project?: string;
  disabled?: boolean;
  real_name_verified?: boolean;
  limits?: {
    requests_per_minute?: number | null;
    characters_per_minute?: number | null;
    speech_to_text_per_minute?: number | null;
    max_concurrent_calls?: number | null;
    single_channel?: boolean;
  };
  speech_settings?: SpeechSettings;
  /** Pace and audio faults of every audio stream of the account; replaces the previous ones (`{}` clears). */
  stream_faults?: StreamFaults;
}

/** The stream fault fields (docs/voice-agents.md). */
export type StreamFaults = Pick<
  FaultDirective,
  | 'ttfa_ms'
  | 'rtf'
  | 'jitter_ms'
  | 'stall_ms'
  | 'stall_at_ms'
  | 'drop_final'
  | 'duplicate_chunk'
  | 'hex_odd'
  | 'split_frame'
  | 'gap_ms'
  | 'gap_at_ms'
  | 'corrupt_bytes'
  | 'extra_info_mismatch'
>;

export interface AccountView {
  /** The key, redacted. */
  account: string;
  balance_micro: number;
  free_call_seconds: number;
  capabilities: Capability[];
  project: string;
  disabled: boolean;
  limits: AccountLimits;
  real_name_verified: boolean;
  speech_settings: SpeechSettings;
  stream_faults: StreamFaults;
}
