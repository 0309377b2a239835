/**
 * Wire shapes of `POST /v1/t2a_v2` (spec: speech-t2a-api.md). Objects are plain (unknown keys are
 * dropped, as the real service ignores them); optional fields accept `null` as "not given", which
 * real clients send. Range and enum messages are written out so a 2013 names the field and the rule.
 */
import * as z from 'zod';
import { bracketPath, type FieldProblem } from '../../core/http/validation.js';
import { SUBTITLE_TYPES } from './ws/subtitles.js';

export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 32000, 44100] as const;
/** Rates outside the general enum that libopus takes: refused with the Opus rule's words, not the enum's. */
export const OPUS_ONLY_RATES = [12000, 48000] as const;
export const BITRATES = [32000, 64000, 128000, 256000] as const;
/** Every output format (speech-current.md E12); which transport takes which is formats.ts's rule. */
export const FORMATS = ['mp3', 'pcm', 'flac', 'wav', 'pcmu_raw', 'pcmu_wav', 'opus'] as const;
/** `text_normalization_mode` (rule E10); the deprecated booleans set to true mean `basic`. */
export const TEXT_NORMALIZATION_MODES = ['basic', 'quality'] as const;
export type TextNormalizationMode = (typeof TEXT_NORMALIZATION_MODES)[number];
export const SOUND_EFFECTS = ['spacious_echo', 'auditorium_echo', 'lofi_telephone', 'robotic'] as const;
export const LANGUAGE_BOOSTS = [
  'Chinese',
  'Chinese,Yue',
  'English',
  'Arabic',
  'Russian',
  'Spanish',
  'French',
  'Portuguese',
  'German',
  'Turkish',
  'Dutch',
  'Ukrainian',
  'Vietnamese',
  'Indonesian',
  'Japanese',
  'Italian',
  'Korean',
  'Thai',
  'Polish',
  'Romanian',
  'Greek',
  'Czech',
  'Finnish',
  'Hindi',
  'Bulgarian',
  'Danish',
  'Hebrew',
  'Malay',
  'Persian',
  'Slovak',
  'Swedish',
  'Croatian',
  'Filipino',
  'Hungarian',
  'Norwegian',
  'Slovenian',
  'Catalan',
  'Nynorsk',
  'Tamil',
  'Afrikaans',
  'auto',
] as const;

const oneOf = (values: readonly (string | number)[]) => `must be one of ${values.join(', ')}`;
const opt = <T extends z.ZodType>(t: T) => t.nullish();
const bool = () => opt(z.boolean());
const range100 = () => opt(z.int().min(-100, 'must be an integer in [-100, 100]').max(100, 'must be an integer in [-100, 100]'));

export const voiceSettingSchema = z.object({
  voice_id: opt(z.string()),
  speed: opt(z.number().min(0.5, 'must be in [0.5, 2]').max(2, 'must be in [0.5, 2]')),
  vol: opt(z.number().gt(0, 'must be in (0, 10]').max(10, 'must be in (0, 10]')),
  pitch: opt(z.int('must be an integer in [-12, 12]').min(-12, 'must be an integer in [-12, 12]').max(12, 'must be an integer in [-12, 12]')),
  // Checked against the model's emotions in the catalogue, so the message lists what that model accepts.
  emotion: opt(z.string('must be a string')),
  text_normalization: bool(),
  /** The WebSocket's name for `text_normalization`, also read on HTTP (rule E10: `true` means `basic`). */
  english_normalization: bool(),
  latex_read: bool(),
});

export const audioSettingSchema = z.object({
  // Opus's own 12000 and 48000 pass here so that an Opus request hears the Opus rule (formats.ts),
  // and every other format the general enum's words.
  sample_rate: opt(
    z.union(
      [...SAMPLE_RATES, ...OPUS_ONLY_RATES].map((r) => z.literal(r)),
      oneOf(SAMPLE_RATES),
    ),
  ),
  bitrate: opt(
    z.union(
      BITRATES.map((r) => z.literal(r)),
      oneOf(BITRATES),
    ),
  ),
  format: opt(z.enum(FORMATS, oneOf(FORMATS))),
  channel: opt(z.union([z.literal(1), z.literal(2)], oneOf([1, 2]))),
  force_cbr: bool(),
});

export const timberWeightSchema = z.object({
  voice_id: z.string().min(1, 'must not be empty'),
  weight: z.int('must be an integer in [1, 100]').min(1, 'must be an integer in [1, 100]').max(100, 'must be an integer in [1, 100]'),
});

const timberWeights = opt(z.array(timberWeightSchema).min(1, 'must hold 1 to 4 voices').max(4, 'must hold 1 to 4 voices'));

export const t2aRequestSchema = z.object({
  model: z.string(),
  text: z.string(),
  stream: bool(),
  stream_options: opt(z.object({ exclude_aggregated_audio: bool() })),
  voice_setting: opt(voiceSettingSchema),
  audio_setting: opt(audioSettingSchema),
  pronunciation_dict: opt(z.object({ tone: opt(z.array(z.string())) }, 'must be an object {"tone": ["<text>/<replacement>", ...]} (an array is not accepted)')),
  timber_weights: timberWeights,
  /** The spelling used in the description of `voice_id`; accepted as the same field. */
  timbre_weights: timberWeights,
  language_boost: opt(z.enum(LANGUAGE_BOOSTS, oneOf(LANGUAGE_BOOSTS))),
  voice_modify: opt(
    z.object({
      pitch: range100(),
      intensity: range100(),
      timbre: range100(),
      sound_effects: opt(z.enum(SOUND_EFFECTS, oneOf(SOUND_EFFECTS))),
    }),
  ),
  subtitle_enable: bool(),
  subtitle_type: opt(z.enum(SUBTITLE_TYPES, oneOf(SUBTITLE_TYPES))),
  text_normalization_mode: opt(z.enum(TEXT_NORMALIZATION_MODES, oneOf(TEXT_NORMALIZATION_MODES))),
  output_format: opt(z.enum(['url', 'hex'], oneOf(['url', 'hex']))),
  aigc_watermark: bool(),
});
export type T2aRequest = z.infer<typeof t2aRequestSchema>;

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

/** The rule a problem broke, in the words a 2013 message uses: `must be in [0.5, 2]`, `is required`. */
function ruleText(problem: FieldProblem): string {
  if (problem.code === 'invalid_type') {
    if (problem.missing) return 'is required';
    if (!problem.rule.startsWith('Invalid')) return problem.rule;
    const expected = problem.expected ?? '';
    return `must be ${TYPE_NAMES[expected] ?? expected}`;
  }
  if (problem.code === 'unrecognized_keys') return `has unknown keys ${(problem.keys ?? []).join(', ')}`;
  return problem.rule;
}

/** The first problem of a body (parsed with `reportInput`): `voice_setting.speed must be in [0.5, 2]`. */
export function firstProblem(problem: FieldProblem | undefined): string {
  if (!problem) return 'request body is invalid';
  return `${bracketPath(problem.path) || 'request body'} ${ruleText(problem)}`;
}
