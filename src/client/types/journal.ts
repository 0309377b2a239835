/**
 * The control plane's journal, its synthesized caller audio and its verification, as the control client
 * reads them (re-exported by src/client/types.ts, held equal to the server by test/client/types.test.ts).
 */
import type { BudgetResult, Budgets, DeliveryFigures } from './report.js';

// ---- journal ------------------------------------------------------------------------------------

export type Listener = 'speech' | 'speech-backup' | 'platform';

export interface JournalQuery {
  /** At most this many entries (newest first). */
  limit?: number;
  /** Only entries of this path. */
  path?: string;
  /** Only entries of this API key. */
  account?: string;
  listener?: Listener;
  method?: string;
  status?: number;
  /** The answer's spec code. */
  code?: string;
  /** Request headers the entries carry (names case-insensitive). */
  header?: Record<string, string>;
  /** Query parameters the entries carry. */
  query?: Record<string, string>;
  /** Whether a fault was injected. */
  fault?: boolean;
  /** A window on the emulator clock: since_ms <= at_ms < until_ms. */
  since_ms?: number;
  until_ms?: number;
}

export interface WsFrameView {
  dir: 'in' | 'out';
  type: 'text' | 'binary' | 'close';
  size: number;
  event?: string;
  at_ms: number;
  /** A text frame's JSON (audio fields replaced by `{chars}`), or its text when not JSON. */
  content?: unknown;
  /** The content was cut (over the per-frame bound) or dropped (over the journal's bound). */
  truncated?: true;
}

/** One request as the journal shows it (keys redacted). */
export interface JournalEntryView {
  id: string;
  at_ms: number;
  service: 'speech' | 'platform';
  /** The listener that served it (the backup is a second listener of the speech service). */
  listener: Listener;
  method: string;
  path: string;
  /** Null while the request is still being answered. */
  status: number | null;
  /** The key, redacted. */
  account: string | null;
  duration_ms: number | null;
  request: { headers: Record<string, string>; query: Record<string, unknown> | undefined; body: unknown };
  response: { summary: unknown; content_type: string | undefined; code: number | undefined };
  /** The fault injected: its origin (`header`, a rule id, `account`) and what it did. */
  fault?: Record<string, unknown>;
  chunks?: number;
  /** A streamed answer: its bytes, first and last events without their audio. */
  stream?: Record<string, unknown>;
  ws_frames?: WsFrameView[];
  ws_frames_total?: number;
  /** A room connection (`GET /rtc`): the room, the participant, its tracks and its disconnect reason. */
  room?: {
    room_name: string;
    identity: string;
    participant_sid: string;
    tracks_published: { sid: string; name: string; source: string }[];
    tracks_subscribed: { sid: string; participant: string }[];
    disconnect_reason: string | null;
  };
  /** Frame contents were dropped to keep the journal within its bound in bytes. */
  ws_frames_truncated?: true;
  /** How a stream ended, a fault that fired… (absent from the JSON when there is none). */
  note: string | undefined;
  client_audio?: { bytes: number; sample_rate: number; truncated: boolean; url: string };
  answer_audio?: { bytes: number; format: string; sample_rate: number; channels: number; url: string };
  /** A stream of synthesized audio: its delivery figures (docs/voice-agents.md, "Latency figures"). */
  delivery?: DeliveryFigures;
  /** Tapes: the request was replayed from a tape, forwarded to the real service (and recorded), or missed every tape. */
  tape?: {
    mode: 'replayed' | 'forwarded' | 'missed';
    id?: string;
    upstream?: string;
    recorded?: boolean;
    problem?: string;
    nearest?: { id: string; differs: string[] }[];
  };
}

/** Audio the control plane serves for a journal entry. */
export interface JournalAudio {
  bytes: Uint8Array;
  contentType: string;
}

// ---- speak ---------------------------------------------------------------------------------------

/** `POST /_emulator/speak`: a caller's audio with seeded impairments of a bad line (docs/voice-agents.md). */
export interface SpeakRequest {
  text: string;
  voice_id?: string;
  language?: string;
  format?: 'pcm' | 'wav' | 'mp3' | 'pcmu_raw' | 'pcmu_wav';
  sample_rate?: 8000 | 16000 | 22050 | 24000 | 32000 | 44100 | 48000;
  seed?: string;
  leading_silence_ms?: number;
  gain_db?: number;
  clip?: number;
  noise_db?: number;
  dropouts?: number;
  dropout_ms?: number;
  codec?: 'mulaw' | 'mp3';
}

/** The audio `speak` made, with what its headers say of it. */
export interface SpokenAudio extends JournalAudio {
  sampleRate: number;
  durationMs: number;
  signatureId: string;
  /** Where each impairment was put: the voice, speech and noise levels, clipped samples, dropout starts (ms). */
  impairments: { voice_id: string; speechRms: number; noiseRms: number; clippedSamples: number; dropoutsAtMs: number[] };
}

// ---- verify -------------------------------------------------------------------------------------

/** `POST /_emulator/verify`: a matcher and how many entries it must select (at least 1 by default). */
export interface VerifyRequest {
  request: {
    service?: 'speech' | 'platform';
    listener?: Listener;
    method?: string;
    path?: string;
    account?: string;
    status?: number;
    /** The answer's spec code. */
    code?: number | string;
    /** A JSON subset of the request body. */
    body?: unknown;
    /** A subset of the request headers (names case-insensitive; credentials compared redacted). */
    headers?: Record<string, string>;
    /** A subset of the query parameters. */
    query?: Record<string, string | number | boolean | string[]>;
    /** Whether a fault was injected. */
    fault?: boolean;
    /** A window on the emulator clock: since_ms <= at_ms < until_ms. */
    since_ms?: number;
    until_ms?: number;
  };
  exactly?: number;
  at_least?: number;
  at_most?: number;
  /** Bounds on the latency figures of the entries selected (docs/voice-agents.md, "Latency budgets in CI"). */
  budgets?: Budgets;
}

export interface VerifyResult {
  ok: true;
  count: number;
  /** The expectation in words, e.g. `exactly 2`. */
  expected: string;
  /** Each budget asked, as checked (present when budgets were given). */
  budgets?: BudgetResult[];
}

/** The 409 answer of a verification that did not hold. */
export interface VerifyFailure {
  ok: false;
  count: number;
  expected: string;
  /** The nearest entries that did not match, fewest differing fields first; for a budget broken, the entries over it, worst first. */
  near_misses: { differences: string[]; entry: JournalEntryView }[];
  /** Each budget asked, as checked (present when the count held and a budget did not). */
  budgets?: BudgetResult[];
  error: { message: string };
}
