/**
 * The fixture files the control plane reads and replaces, as the control client sends and reads them
 * (re-exported by src/client/types.ts, held equal to the server by test/client/types.test.ts).
 */
import type { Capability, SpeechSettings } from './accounts.js';

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
