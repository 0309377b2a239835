/**
 * Platform synthesis rules. The route's schema types the body; the rules, voice resolution and
 * billing live here; routes.ts only moves bytes. The `/mcp` tools call `synthesizeTts` with an
 * authenticated account and arguments parsed by the same schema.
 */
import { canPay, charge } from '../../shared/charges.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { speechRecord } from '../../../core/state/signatures.js';
import { synthesize, synthesizeStreamSliced, type SynthInput, type SynthStream, type SynthSummary } from '../../../audio/index.js';
import { PlatformError } from '../envelope.js';
import { findCustomVoice } from '../../shared/custom-voices.js';
import type { TtsRequest } from './schema.js';
import { pcmChunks, wholeFile, type TtsFormat } from './wav.js';

/** The format of a synthesis as its callers (the route, the /mcp tool) name it. */
export type { TtsFormat };

export const TTS_SAMPLE_RATE = 24000;
export const TTS_CHANNELS = 1;
export const TTS_BIT_DEPTH = 16;
export const MAX_WEIGHTED_LENGTH = 500;
export const TTS_MODELS = ['std-tts'] as const;
const FORMATS: Record<string, TtsFormat> = { '': 'wav', wav: 'wav', pcm: 'pcm', pcm_s16le: 'pcm' };
const LANGUAGE = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/;
const HAN = /\p{Script=Han}/u;

export interface TtsPlan {
  synth: SynthInput;
  format: TtsFormat;
  contentType: 'audio/wav' | 'audio/pcm';
  voiceId: string;
  language: string;
  weightedLength: number;
  priceMicro: number;
}

export interface TtsAudio {
  bytes: Buffer;
  contentType: TtsPlan['contentType'];
  format: TtsFormat;
  sampleRate: number;
  channels: number;
  bitDepth: number;
  durationMs: number;
  signatureId: string;
}

/** Length of the platform: a Chinese (Han) character counts 2, any other code point 1. */
export function weightedLength(text: string): number {
  let length = 0;
  for (const ch of text) length += HAN.test(ch) ? 2 : 1;
  return length;
}

const param = (message: string) => new PlatformError('param', message);
const insufficientBalance = (message: string) => new PlatformError('balance', message);

/**
 * Checks a request and resolves its voice; throws the first problem. Nothing is charged yet. In
 * order (10001 unless named): voice_id and generate_text not blank, the weighted length (500), the
 * voice (system or this account's custom voice), model_id, speed (0.6 to 1.2, 0 = 1.0),
 * audio_format, language; then the balance (20003).
 */
export function planTts(emu: Emulator, account: Account, req: TtsRequest): TtsPlan {
  if (!req.voice_id.trim()) throw param('voice_id: is required and must not be empty');
  const text = req.generate_text;
  if (!text.trim()) throw param('generate_text: is required and must not be empty');
  const weighted = weightedLength(text);
  if (weighted > MAX_WEIGHTED_LENGTH) {
    throw param(`generate_text: weighted length ${weighted} exceeds ${MAX_WEIGHTED_LENGTH} (a Chinese character counts 2, any other character 1)`);
  }

  const system = emu.fixtures.data['platform-voices.json'].find((v) => v.voice_id === req.voice_id);
  const custom = system ? undefined : findCustomVoice(emu, account.id, req.voice_id);
  if (!system && !custom) throw param(`voice_id: "${req.voice_id}" is neither a system voice nor a custom voice of this account`);

  const model = req.model_id || TTS_MODELS[0];
  if (!(TTS_MODELS as readonly string[]).includes(model)) throw param(`model_id: unsupported model "${model}"; supported: ${TTS_MODELS.join(', ')}`);

  let speed = req.speed ?? 0;
  if (speed === 0) speed = 1;
  else if (!(speed >= 0.6 && speed <= 1.2)) throw param(`speed: must be between 0.6 and 1.2 (or 0 for the default 1.0), got ${req.speed}`);

  const format = FORMATS[req.audio_format ?? ''];
  if (!format) throw param(`audio_format: unsupported format "${req.audio_format}"; use wav or pcm (pcm_s16le)`);

  if (req.language != null && !LANGUAGE.test(req.language)) throw param(`language: "${req.language}" is not a language code such as zh or en`);
  const language = req.language || (system ? system.language : 'zh');

  // emotion_class is accepted and ignored: the standard model does not process it.
  const priceMicro = weighted * emu.fixtures.data['billing.json'].prices_micro.platform_tts_character;
  if (!canPay(emu, account, priceMicro)) {
    throw insufficientBalance(`insufficient balance: this synthesis costs ${priceMicro} micro-units, the balance is ${account.balanceMicro}`);
  }

  return {
    synth: {
      text,
      voices: [{ id: custom ? custom.toneId : req.voice_id, weight: 1 }],
      engine: emu.config.voiceEngine,
      speed,
      textNormalization: req.text_normalization ?? false,
      tags: true,
      sampleRate: TTS_SAMPLE_RATE,
      channels: TTS_CHANNELS,
    },
    format,
    contentType: format === 'wav' ? 'audio/wav' : 'audio/pcm',
    voiceId: req.voice_id,
    language,
    weightedLength: weighted,
    priceMicro,
  };
}

/** Charges the synthesis and records what the audio says, so recognition and detection know it. */
function commit(emu: Emulator, account: Account, plan: TtsPlan, summary: SynthSummary): void {
  charge(emu, account, plan.priceMicro);
  emu.signatures.put(speechRecord({ text: plan.synth.text, language: plan.language, voices: [plan.voiceId], summary, atMs: emu.clock.now() }));
}

/**
 * Starts a streamed synthesis: audio chunks are rendered as they are read. `shape` sees the PCM before
 * it is encoded (the stream guard's `gap_ms`, the pace's count of audio made).
 */
export async function startTtsStream(
  emu: Emulator,
  account: Account,
  plan: TtsPlan,
  signal?: AbortSignal,
  shape: (pcm: AsyncIterable<Int16Array>) => AsyncIterable<Int16Array> = (pcm) => pcm,
): Promise<{ stream: SynthStream; chunks: AsyncIterable<Buffer> }> {
  // Planned in slices (the speech engine speaks the whole text first): other requests keep being served.
  const stream = await synthesizeStreamSliced(plan.synth, { signal });
  commit(emu, account, plan, stream);
  return { stream, chunks: pcmChunks(plan.format, shape(stream), TTS_SAMPLE_RATE, TTS_CHANNELS) };
}

/** A whole synthesis (the sync endpoint and the `/mcp` tool): bytes plus what a decoder will find. */
export async function synthesizeTts(emu: Emulator, account: Account, req: TtsRequest): Promise<TtsAudio> {
  const plan = planTts(emu, account, req);
  const result = await synthesize(plan.synth);
  commit(emu, account, plan, result);
  const bytes = await wholeFile(plan.format, result);
  emu.metrics.audioSynthesized(plan.format, result.durationMs / 1000);
  return {
    bytes,
    contentType: plan.contentType,
    format: plan.format,
    sampleRate: TTS_SAMPLE_RATE,
    channels: TTS_CHANNELS,
    bitDepth: TTS_BIT_DEPTH,
    durationMs: result.durationMs,
    signatureId: result.signatureId,
  };
}
