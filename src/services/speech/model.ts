/**
 * Rules of `POST /v1/t2a_v2`, apart from HTTP: from a parsed body to a synthesis plan (or the error the
 * spec gives), voices of the catalogue and of the account, billing, per-account rate windows and the
 * record of what was spoken. Errors are thrown as SpeechError (named constructors of errors.ts).
 * routes.ts runs these rules and does the rest: it writes the answer and what it leaves behind (the
 * subtitle file in the blob store, the audio metric).
 */
import { canPay, charge } from '../shared/charges.js';
import { parseWith } from './body.js';
import {
  encodeAudio,
  reportedBitrate,
  synthesizeStreamSliced,
  type AudioFormat,
  type SynthInput,
  type SynthSummary,
  type VoiceModify,
  type VoiceTone,
} from '../../audio/index.js';
import type { Account } from '../../core/state/accounts.js';
import type { Emulator } from '../../core/emulator.js';
import { findCustomVoice } from '../shared/custom-voices.js';
import { checkLanguageBoost, emotionOf, interjectionsOf, modelOf } from './catalogue.js';
import { insufficientBalance, invalidParams, rateLimited, textRatioLimit, tokenLimit, voiceNotFound } from './errors.js';
import type { SpeechArea } from './state.js';
import { t2aRequestSchema, type T2aRequest, type TextNormalizationMode } from './schema.js';
import { checkEncoder, oggSerialFor, outputRate, voiceModifyApplies } from './formats.js';
import { markVoicesUsed, speechVoiceTone } from './voices/store.js';
import { systemVoiceTone } from './voices/system.js';
import { wordsWithin, type SubtitleType } from './ws/subtitles.js';
import {
  checkLatex,
  checkPauseMarkers,
  codePoints,
  countText,
  hasPronounceable,
  invisibleRatio,
  languageByHanMajority,
  MAX_INVISIBLE_RATIO,
  MAX_TEXT_CHARS,
  parsePronunciations,
} from './text.js';

export const URL_TTL_MS = 24 * 3600 * 1000;
const MINUTE_MS = 60_000;

export interface SynthesisPlan {
  /** The catalogue's model (a legacy alias resolved). */
  model: string;
  stream: boolean;
  excludeAggregated: boolean;
  format: AudioFormat;
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number;
  /** Opus: the Ogg stream's serial number, minted once the request is accepted (startSynthesis). */
  serial?: number;
  outputUrl: boolean;
  /** With `subtitle_enable`: the subtitle type (`word_streaming` is `word` without streaming, rule E16). */
  subtitles: SubtitleType | undefined;
  input: SynthInput;
  /** The voice ids as the request named them (the input holds the engine's tones). */
  voiceIds: string[];
  /** The normalisation this request gets, when it asked for one (rule E10); the audio is the same for both. */
  textNormalizationMode: TextNormalizationMode | undefined;
  /** Cloned or designed voices this synthesis used for the first time (set when it is recorded; the voice fee). */
  usageVoiceCount?: number;
  language: string;
  invisibleRatio: number;
  usageCharacters: number;
  wordCount: number;
  priceMicro: number;
}

/** The longest audio one request may ask for (emulator rule: pause markers and newlines add up). */
export const MAX_AUDIO_SECONDS = 3 * 3600;
/** The largest audio file returned inside a JSON value as hex (non-streaming, or a stream's final chunk). */
export const MAX_INLINE_AUDIO_BYTES = 200 * 1024 * 1024;

/**
 * Emulator rule where the spec is silent: a request whose audio would be absurdly long, or too large to
 * return as hex inside one JSON answer, is refused with 2013 before any work (and before billing).
 */
export function checkOutputSize(plan: SynthesisPlan, durationMs: number): void {
  const seconds = durationMs / 1000;
  if (seconds > MAX_AUDIO_SECONDS) {
    throw invalidParams(
      `text: the audio would last ${Math.round(seconds)} s, over the emulator's limit of ${MAX_AUDIO_SECONDS} s per request (pause markers and line breaks add up)`,
    );
  }
  const inline = plan.stream ? !plan.excludeAggregated : !plan.outputUrl;
  if (!inline) return;
  const bytes = (seconds * (plan.format === 'mp3' ? plan.bitrate : reportedBitrate(plan.format, plan.sampleRate, plan.channels))) / 8;
  if (bytes > MAX_INLINE_AUDIO_BYTES) {
    const mb = Math.round(bytes / 1048576);
    throw invalidParams(
      `audio_setting: the audio would be about ${mb} MB, over the emulator's ${MAX_INLINE_AUDIO_BYTES / 1048576} MB limit for audio returned as hex inside JSON; ask for output_format "url", stream with stream_options.exclude_aggregated_audio, or a compressed format`,
    );
  }
}

/** Whether a stream may start before the speech engine has spoken the whole text (its length an estimate until its end). */
export interface GrowingOptions {
  growing?: boolean;
  /** Formats whose header states the audio's length (μ-law WAV always is one): these are planned whole first. */
  lengthUpFront?: readonly string[];
}

/**
 * One T2A request after admission and its body's schema (readRequest, the route's validator), its steps
 * in order: the plan of the request (every rule of the request object), the plan of the audio (pull-based: its duration is known before any sample is rendered), the
 * size cap, the balance and rate windows (then the charge), the usage count. Throws the SpeechError of
 * the first step that refuses; nothing is charged or counted before the last check passed.
 */
export async function startSynthesis(
  emu: Emulator,
  area: SpeechArea,
  account: Account,
  request: T2aRequest,
  signal: AbortSignal,
  options: PlanOptions & GrowingOptions = {},
) {
  const plan = planRequest(emu, account, request, options);
  // Planning is pull-based (the duration is known before any sample is rendered) and sliced, so a long
  // text never holds the event loop. A growing stream (an event stream or a socket's piece, unless its
  // header states the length up front) may start before the speech engine has spoken the whole text.
  const growing = options.growing === true && plan.stream && plan.format !== 'pcmu_wav' && !options.lengthUpFront?.includes(plan.format);
  const synth = await synthesizeStreamSliced(plan.input, { signal, growing });
  checkOutputSize(plan, synth.durationMs);
  chargeRequest(emu, account, plan);
  area.count(account.id, plan);
  plan.serial = oggSerialFor(emu, account, plan.format);
  // Only the speech engine's stream grows (the tone engine plans the whole text at once).
  return { plan, synth, growing: growing && synth.engine === 'speech' };
}

/** What the encoder needs of a plan: rate, channels, bitrate (mp3) and the Ogg serial (opus). */
export function encodeOptionsOf(plan: SynthesisPlan) {
  return { sampleRate: plan.sampleRate, channels: plan.channels, bitrate: plan.bitrate, ...(plan.serial !== undefined ? { serial: plan.serial } : {}) };
}

/**
 * The audio of a request made again, neither charged nor counted: the same request (and, for Opus,
 * the same Ogg serial) gives the same bytes (for the journal's answer audio). Throws the SpeechError
 * a request would get now (a voice since deleted, for one).
 */
export async function synthesizeAgain(emu: Emulator, account: Account, request: T2aRequest, serial?: number): Promise<Buffer> {
  const plan = { ...planRequest(emu, account, request), serial };
  const synth = await synthesizeStreamSliced(plan.input, {});
  return (await encodeAudio(plan.format, synth, encodeOptionsOf(plan))).bytes;
}

/**
 * The body typed by the route's schema, or the 2013 naming its first problem in A2's words (`voice_setting.speed
 * must be in [0.5, 2]`, `text is required`). The route's validator: it runs after the admission path, and
 * its words need the parse's `reportInput`.
 */
export function readRequest(body: unknown): T2aRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidParams('request body must be a JSON object');
  checkPronunciationDictType((body as Record<string, unknown>).pronunciation_dict);
  return parseWith(t2aRequestSchema, body);
}

export interface PlanOptions {
  /** Async synthesis allows longer texts. */
  maxTextChars?: number;
  /** A socket's piece: the session started then, and a voice deleted since keeps speaking in it (E11). */
  voicesAsOf?: number;
  /** Async synthesis settles its own rate (its Opus rule differs). */
  sampleRate?: number;
}

/**
 * `pronunciation_dict` must be the object `{tone: [...]}` (E17). Anything else fails as the real
 * service's decoding does, before any field rule, with its own text (observed for an array, as old
 * official CLIs sent it); `null` means not given.
 */
function checkPronunciationDictType(dict: unknown): void {
  if (dict === undefined || dict === null || (typeof dict === 'object' && !Array.isArray(dict))) return;
  const kind = Array.isArray(dict) ? 'array' : typeof dict;
  throw invalidParams(`Mismatch type open_platform.PronunciationDict with value ${kind}`);
}

/** Checks a typed request: every rule of the request object, in the order a reader expects. */
export function planRequest(emu: Emulator, account: Account, request: T2aRequest, limits: PlanOptions = {}): SynthesisPlan {
  const entry = modelOf(emu, request.model);
  const model = entry.model;
  const stream = request.stream === true;

  const text = request.text;
  const length = codePoints(text);
  if (length === 0) throw invalidParams('text is required and must not be empty');
  const maxChars = limits.maxTextChars ?? MAX_TEXT_CHARS; // async synthesis allows longer texts
  if (length >= maxChars) throw invalidParams(`text must be shorter than ${maxChars} characters (got ${length})`);
  const markerProblem = checkPauseMarkers(text);
  if (markerProblem) throw invalidParams(markerProblem);

  const voiceSetting = request.voice_setting ?? {};
  if (voiceSetting.latex_read) {
    const latexProblem = checkLatex(text);
    if (latexProblem) throw invalidParams(latexProblem);
  }
  const emotion = voiceSetting.emotion ? emotionOf(emu, entry, voiceSetting.emotion) : undefined;
  if (request.language_boost) checkLanguageBoost(entry, request.language_boost);

  const audioSetting = request.audio_setting ?? {};
  const format = audioSetting.format ?? 'mp3';
  if (stream && format === 'wav') throw invalidParams('audio_setting.format wav is supported only in non-streaming output');
  checkEncoder(format);
  const sampleRate = outputRate(format, audioSetting.sample_rate, limits.sampleRate);

  const pronunciations = parsePronunciations(request.pronunciation_dict?.tone ?? []);
  if (typeof pronunciations === 'string') throw invalidParams(pronunciations);

  const mix = voicesOf(emu, account, request, limits.voicesAsOf);
  const voices = mix.map(({ id, weight }) => ({ id, weight }));

  const ratio = invisibleRatio(text);
  if (ratio > MAX_INVISIBLE_RATIO) throw textRatioLimit();
  const counts = countText(text);
  if (!hasPronounceable(text)) throw invalidParams('text must contain at least one letter or digit to pronounce');

  // voice_modify applies to non-streaming mp3/wav/flac and streaming mp3; elsewhere it is accepted and ignored.
  const voiceModify = voiceModifyApplies(format, stream) ? voiceModifyOf(request) : undefined;
  const interjections = interjectionsOf(emu, entry);
  const channels = audioSetting.channel ?? 1;
  const normalization = normalizationOf(request, model, stream);
  const input: SynthInput = {
    text,
    voices,
    speed: voiceSetting.speed ?? 1,
    vol: voiceSetting.vol ?? 1,
    pitch: voiceSetting.pitch ?? 0,
    ...(emotion ? { emotion } : {}),
    ...(voiceModify ? { voiceModify } : {}),
    textNormalization: normalization !== undefined,
    pauseMarkers: true,
    tags: false,
    ...(interjections ? { interjections } : {}),
    pronunciations,
    latex: voiceSetting.latex_read === true,
    watermark: !stream && request.aigc_watermark === true,
    sampleRate,
    channels,
    engine: emu.config.voiceEngine,
  };
  const price = counts.usageCharacters * emu.fixtures.data['billing.json'].prices_micro.speech_character;
  return {
    model,
    stream,
    excludeAggregated: request.stream_options?.exclude_aggregated_audio === true,
    format,
    sampleRate,
    channels,
    bitrate: audioSetting.bitrate ?? 128000,
    outputUrl: !stream && request.output_format === 'url',
    subtitles: subtitlesOf(request, stream),
    input,
    voiceIds: mix.map((v) => v.voiceId),
    textNormalizationMode: normalization,
    language: languageByHanMajority(text, request.language_boost),
    invisibleRatio: ratio,
    usageCharacters: counts.usageCharacters,
    wordCount: counts.wordCount,
    priceMicro: price,
  };
}

/**
 * The normalisation a request gets (rule E10): `text_normalization_mode` wins over the deprecated
 * booleans, whose `true` means `basic`. `quality` holds only for non-streaming HTTP with the 2.8 and
 * 2.6 models (the socket plans its pieces as streams); elsewhere it is `basic`.
 */
function normalizationOf(request: T2aRequest, model: string, stream: boolean): TextNormalizationMode | undefined {
  const vs = request.voice_setting;
  const mode = request.text_normalization_mode ?? (vs?.text_normalization === true || vs?.english_normalization === true ? 'basic' : undefined);
  if (mode === 'quality' && (stream || !/^speech-2\.[68]-/.test(model))) return 'basic';
  return mode ?? undefined;
}

/** `subtitle_type` counts only with `subtitle_enable` (rule E16); the old `subtitle: true` is an unknown field. */
function subtitlesOf(request: T2aRequest, stream: boolean): SubtitleType | undefined {
  if (request.subtitle_enable !== true) return undefined;
  const type = request.subtitle_type ?? 'sentence';
  return type === 'word_streaming' && !stream ? 'word' : type;
}

function voiceModifyOf(request: T2aRequest): VoiceModify | undefined {
  const modify = request.voice_modify;
  if (!modify) return undefined;
  const out: VoiceModify = {};
  if (modify.pitch) out.pitch = modify.pitch;
  if (modify.intensity) out.intensity = modify.intensity;
  if (modify.timbre) out.timbre = modify.timbre;
  if (modify.sound_effects) out.soundEffect = modify.sound_effects;
  return Object.keys(out).length ? out : undefined;
}

/** The voice mix: `timber_weights` (or `timbre_weights`) when given, else `voice_setting.voice_id`. */
function voicesOf(emu: Emulator, account: Account, request: T2aRequest, asOfMs?: number): (VoiceTone & { voiceId: string })[] {
  if (request.timber_weights != null && request.timbre_weights != null)
    throw invalidParams('timber_weights and timbre_weights are two spellings of one field: give only one of them');
  const weights = request.timber_weights ?? request.timbre_weights;
  const field = request.timber_weights ? 'timber_weights' : 'timbre_weights';
  if (weights && weights.length) {
    return weights.map((entry, index) => {
      const tone = toneOf(emu, account, entry.voice_id, asOfMs);
      if (!tone) throw voiceNotFound(`${field}[${index}].voice_id ${entry.voice_id}`);
      return { id: tone, weight: entry.weight, voiceId: entry.voice_id };
    });
  }
  if (!request.voice_setting) throw invalidParams('voice_setting is required (or timber_weights for mixed voices)');
  const id = request.voice_setting.voice_id;
  if (id === undefined || id === null) throw invalidParams('voice_setting.voice_id is required');
  if (!id) throw invalidParams('voice_setting.voice_id must not be empty unless timber_weights is given');
  const tone = toneOf(emu, account, id, asOfMs);
  if (!tone) throw voiceNotFound(`voice_setting.voice_id ${id}`);
  return [{ id: tone, weight: 1, voiceId: id }];
}

/**
 * The audio engine's tone of a voice id: a system voice of the catalogue speaks with its own tone
 * (voices/system.ts; looked up exactly, two spellings of one voice share one); a custom
 * voice of the caller's account on the platform (its cloned voices, docs/speech.md) sounds like its
 * reference audio. Undefined when neither.
 */
export function toneOf(emu: Emulator, account: Account, voiceId: string, asOfMs?: number): string | undefined {
  const system = systemVoiceTone(emu, voiceId);
  if (system) return system;
  // --- voices cloned or designed on the speech service (voices/store.ts): 2042 for another account's ---
  const made = speechVoiceTone(emu, account, voiceId, asOfMs);
  if (made) return made;
  // ---
  return findCustomVoice(emu, account.id, voiceId)?.toneId;
}

/** Balance, then the account's request and character windows (off unless its limits set them), then the charge. */
export function chargeRequest(emu: Emulator, account: Account, plan: SynthesisPlan): void {
  if (!canPay(emu, account, plan.priceMicro)) throw insufficientBalance();
  const rpm = account.limits.requests_per_minute;
  if (rpm && !emu.limits.hit(emu.windowKey(account, 'speech:requests'), MINUTE_MS, rpm).allowed) throw rateLimited();
  const cpm = account.limits.characters_per_minute;
  if (cpm && !emu.limits.hit(emu.windowKey(account, 'speech:characters'), MINUTE_MS, cpm, plan.usageCharacters).allowed) throw tokenLimit();
  charge(emu, account, plan.priceMicro);
}

/** Records what the audio says, so the platform's recognition, detection and diarization know it. */
export function recordSignature(emu: Emulator, plan: SynthesisPlan, summary: SynthSummary): void {
  // A cloned or designed voice is kept and listed once it spoke; its first synthesis pays the voice fee.
  plan.usageVoiceCount = markVoicesUsed(emu, plan.voiceIds);
  recordSignatureTimes(emu, plan, summary);
}

/** The signature record alone, again when a growing stream's timeline is final. */
export function recordSignatureTimes(emu: Emulator, plan: SynthesisPlan, summary: SynthSummary): void {
  const { text, pronunciations } = plan.input;
  emu.recordSpeech({ text, pronunciations, language: plan.language, voices: plan.voiceIds, summary });
}

/**
 * Subtitle file of addendum A3: one segment per timeline sentence, with its true times; `word` adds the
 * sentence's words as `timestamped_words` (null for `sentence`, rule E16).
 */
export function subtitleSegments(summary: SynthSummary, type?: SubtitleType) {
  const sentences = summary.timeline.sentences;
  return sentences.map((s, i) => ({
    text: s.text,
    time_begin: s.startMs,
    time_end: s.endMs,
    text_begin: s.charStart,
    text_end: s.charEnd,
    pronounce_text: s.text,
    pronounce_text_begin: s.charStart,
    pronounce_text_end: s.charEnd,
    is_final_segment: i === sentences.length - 1,
    // HTTP's file (a type given) always has the field; async's `.titles` keep their shape.
    ...(type === undefined ? {} : { timestamped_words: type === 'sentence' ? null : wordsWithin(summary.timeline, s.charStart, s.charEnd) }),
  }));
}
