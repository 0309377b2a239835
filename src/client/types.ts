/**
 * The control plane's wire shapes (`/_emulator`), as the control client sends and reads them. Written
 * out here so the public types name no internals; test/client/types.test.ts checks at compile time that
 * each request shape equals the schema the control plane validates with, and each answer the view it
 * builds, so the two cannot drift apart.
 */

/** What an account may use (a missing one answers the service's own refusal). */
export type Capability = 'tts' | 'cloning' | 'upload' | 'podcast' | 'calls' | 'recognition' | 'detection' | 'diarization' | 'agents';

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
}

export interface VerifyResult {
  ok: true;
  count: number;
  /** The expectation in words, e.g. `exactly 2`. */
  expected: string;
}

/** The 409 answer of a verification that did not hold. */
export interface VerifyFailure {
  ok: false;
  count: number;
  expected: string;
  /** The nearest entries that did not match, fewest differing fields first. */
  near_misses: { differences: string[]; entry: JournalEntryView }[];
  error: { message: string };
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

// ---- fixtures -----------------------------------------------------------------------------------

export type FixtureName =
  | 'accounts.json'
  | 'billing.json'
  | 'speech-voices.json'
  | 'speech-models.json'
  | 'platform-voices.json'
  | 'roles.json'
  | 'agents.json'
  | 'recognition.json'
  | 'detection.json'
  | 'diarization.json'
  | 'conversation.json'
  | 'podcast-pairs.json'
  | 'podcast-hosts.json'
  | 'content-safety.json'
  | 'remote-audio.json';

/**
 * The content of each fixture file, as the emulator checks it (each file's schema lives with the service that owns
 * it; test/client/types.test.ts holds every entry equal to what the schema gives).
 */
export interface FixtureContents {
  'accounts.json': {
    key: string;
    limits?:
      | {
          single_channel?: boolean | undefined;
          requests_per_minute?: number | undefined;
          characters_per_minute?: number | undefined;
          speech_to_text_per_minute?: number | undefined;
          max_concurrent_calls?: number | undefined;
        }
      | undefined;
    balance_micro?: number | undefined;
    capabilities?: Capability[] | undefined;
    project?: string | undefined;
    disabled?: boolean | undefined;
    real_name_verified?: boolean | undefined;
    speech_settings?: SpeechSettings | undefined;
  }[];
  'billing.json': {
    prices_micro: {
      speech_character: number;
      platform_tts_character: number;
      call_second: number;
      podcast_audio_second: number;
      recognition_audio_second: number;
      detection_audio_second: number;
      diarization_audio_second: number;
      conversation_audio_second: number;
      agent_second: number;
    };
    free_call_seconds: number;
  };
  'speech-voices.json': {
    language: string;
    description?: string | undefined;
    gender?: 'male' | 'female' | 'neutral' | undefined;
    same_voice_as?: string | undefined;
    voice_id: string;
    voice_name: string;
  }[];
  'speech-models.json': {
    models: { model: string; emotions: string[]; interjection_tags: boolean; unsupported_language_boosts: string[] }[];
    aliases: Record<string, string>;
    /** Legacy emotion values the service still takes, each with the emotion whose audio it gets. */
    legacy_emotions: Record<string, string>;
    interjection_tags: Record<
      string,
      | 'laughs'
      | 'chuckles'
      | 'gasps'
      | 'sighs'
      | 'inhales'
      | 'breath'
      | 'exhale'
      | 'coughs'
      | 'clears throat'
      | 'sniffles'
      | 'snorts'
      | 'hisses'
      | 'tsks'
      | 'groans'
    >;
  };
  'platform-voices.json': { voice_id: string; name: string; language: string; gender: 'male' | 'female' | 'neutral'; description?: string | undefined }[];
  'roles.json': { id: string; name: string; language: string; description: string; voice_id: string; greeting?: string | undefined }[];
  'agents.json': {
    agentId: string;
    name: string;
    project: string;
    published: boolean;
    voice_id?: string | undefined;
    language?: string | undefined;
    greeting?: string | undefined;
  }[];
  'recognition.json': {
    rules: {
      text: string;
      language: string;
      confidence: number;
      sha256?: string | undefined;
      min_ms?: number | undefined;
      max_ms?: number | undefined;
      segments?: { start: number; end: number; speaker: string; text: string }[] | undefined;
      languages?: Record<string, { text: string; segments?: { start: number; end: number; speaker: string; text: string }[] | undefined }> | undefined;
    }[];
    defaults: { text: string; language: string; confidence: number }[];
  };
  'detection.json': { rules: { sha256: string; prediction: 'Fake' | 'Real'; confidence: number }[] };
  'diarization.json': { rules: { sha256: string; speakers: { speaker_id: string; segments: { start_time: number; end_time: number }[] }[] }[] };
  'conversation.json': {
    rules: { match: string; flags: string; reply: string; language?: string | undefined }[];
    defaults: { reply: string; language?: string | undefined }[];
  };
  'podcast-pairs.json': { name: string; description: string; speaker1: string; speaker2: string }[];
  'podcast-hosts.json': string[];
  'content-safety.json': { terms: string[] };
  'remote-audio.json': { url: string; file: string; content_type?: string | undefined }[];
}

/** The content of one fixture file. */
export type FixtureContent<N extends FixtureName> = FixtureContents[N];

export interface FixtureView<N extends FixtureName = FixtureName> {
  name: N;
  /** Where the file was read from, or `run time` when set on the control plane. */
  source: string;
  /** The content (the keys of accounts.json redacted). */
  content: FixtureContent<N>;
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
  /** The emulator's own syntheses found in the recording, in the order heard. */
  utterances: {
    trace_id: string | null;
    journal_id: string | null;
    signature_id: string;
    full_text: string;
    heard_text: string;
    complete: boolean;
    start_ms: number;
    end_ms: number;
    words: HeardWordView[];
  }[];
  /** What differs from what was synthesized, in the order found. */
  anomalies: { kind: 'gap' | 'repeat' | 'missing' | 'cut'; at_ms: number; duration_ms: number; trace_id: string | null }[];
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
