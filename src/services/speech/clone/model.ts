/** Voice cloning rules, in the order they are checked (rule 12.10). */
import { decodeToMono, probeAudio } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { sha256Hex } from '../../../core/state/ids.js';
import { recognizePcm, recognizeWithSource } from '../../shared/recognize.js';
import { toneOfSample } from '../../shared/sample-tone.js';
import { invalidParams, SpeechError } from '../errors.js';
import { findFile, type FileRecord } from '../files/model.js';
import { extraInfo } from '../stream.js';
import { checkNewVoiceId, checkVoiceIdFree } from '../voices/ids.js';
import { synthesizePreview, type Preview } from '../voices/preview.js';
import { addSpeechVoice, dropNewSpeechVoice } from '../voices/store.js';
import type { CloneBody } from './schema.js';
import { similarity } from './similarity.js';

export const MIN_SAMPLE_MS = 10_000;
export const MAX_SAMPLE_MS = 5 * 60_000;
export const MAX_PROMPT_MS = 8_000;
export const DEFAULT_ACCURACY = 0.7;

export const FORBIDDEN = 'user voice clone forbidden, should complete real-name verification';

export interface CloneResult {
  preview?: Preview;
  demoBlob?: string;
}

/** Sample bytes of an uploaded file, its duration, or 20132 naming the field. */
async function audioOf(emu: Emulator, f: FileRecord, field: string, purpose: string): Promise<{ bytes: Buffer; durationMs: number }> {
  if (f.purpose !== purpose)
    throw new SpeechError(20132, `invalid samples or voice_id, ${field} ${f.file_id} was uploaded with purpose ${f.purpose}, not ${purpose}`);
  const bytes = await emu.blobs.read(f.blob);
  try {
    const probe = await probeAudio(bytes, { filename: f.filename });
    return { bytes, durationMs: probe.durationMs };
  } catch (err) {
    throw new SpeechError(20132, `invalid samples or voice_id, ${field} ${f.file_id} cannot be read as audio (${(err as Error).message})`);
  }
}

/** What the emulator's recognition hears in a sample: its own audio, else the recognition fixture. */
async function heardIn(emu: Emulator, bytes: Buffer): Promise<string> {
  try {
    const { samples, sampleRate } = await decodeToMono(bytes);
    return recognizePcm(emu, samples, sampleRate).text;
  } catch {
    // Audio the engine cannot decode to samples (m4a): the fixture's default picked by the bytes.
    const defaults = emu.fixtures.data['recognition.json'].defaults;
    return defaults[parseInt(sha256Hex(bytes).slice(0, 8), 16) % defaults.length]!.text;
  }
}

/**
 * What a prompt audio says when the emulator knows it: its own audio (read from the signature) or audio
 * the recognition fixture names by its hash. Other audio is not compared: the emulator cannot tell what
 * a real recording says, and a transcript is required with every prompt.
 */
async function knownWords(emu: Emulator, bytes: Buffer): Promise<string | undefined> {
  try {
    const { samples, sampleRate } = await decodeToMono(bytes);
    const heard = recognizeWithSource(emu, samples, sampleRate);
    return heard.source === 'signature' || heard.source === 'fixture-hash' ? heard.text : undefined;
  } catch {
    return undefined;
  }
}

export async function cloneVoice(emu: Emulator, account: Account, body: CloneBody): Promise<CloneResult> {
  const voiceId = body.voice_id;
  checkNewVoiceId(emu, voiceId);
  const text = body.text ?? undefined;
  if (text !== undefined && text.trim() === '') throw invalidParams('text must not be empty when given');
  if (text !== undefined && !body.model) throw invalidParams('model is required when text is given');
  if (account.realNameVerified === false) throw new SpeechError(2038, FORBIDDEN);
  checkVoiceIdFree(emu, voiceId);

  const sample = await audioOf(emu, findFile(emu, account, body.file_id, { code: 20132 }), 'file_id', 'voice_clone');
  if (sample.durationMs < MIN_SAMPLE_MS)
    throw new SpeechError(2037, `voice duration too short: the sample lasts ${(sample.durationMs / 1000).toFixed(1)} s, at least 10 s is needed`);
  if (sample.durationMs > MAX_SAMPLE_MS)
    throw new SpeechError(2037, `voice duration too long: the sample lasts ${(sample.durationMs / 1000).toFixed(1)} s, at most 300 s is allowed`);
  let promptAudio: Buffer | undefined;
  if (body.clone_prompt) {
    const field = 'clone_prompt.prompt_audio';
    const prompt = await audioOf(emu, findFile(emu, account, body.clone_prompt.prompt_audio, { field, code: 20132 }), field, 'prompt_audio');
    if (prompt.durationMs >= MAX_PROMPT_MS)
      throw new SpeechError(2048, `prompt audio too long: it lasts ${(prompt.durationMs / 1000).toFixed(1)} s, it must be under 8 s`);
    promptAudio = prompt.bytes;
  }
  if (body.text_validation) {
    const accuracy = body.accuracy || DEFAULT_ACCURACY;
    const heard = await heardIn(emu, sample.bytes);
    const score = similarity(body.text_validation, heard);
    if (score < accuracy) {
      throw new SpeechError(
        1043,
        `The asr similarity check failed: text_validation matches what the sample says at ${score.toFixed(2)}, below accuracy ${accuracy}`,
      );
    }
  }
  if (body.clone_prompt && promptAudio) {
    const known = await knownWords(emu, promptAudio);
    const score = known === undefined ? 1 : similarity(body.clone_prompt.prompt_text, known);
    if (score < DEFAULT_ACCURACY) {
      throw new SpeechError(
        1044,
        `clone prompt similarity check failed: prompt_text matches what the prompt audio says at ${score.toFixed(2)}, below ${DEFAULT_ACCURACY}`,
      );
    }
  }
  // Checked again: another clone of the same id may have finished while the audio was read.
  checkVoiceIdFree(emu, voiceId);
  // The same recording gives the same voice, as on the platform (its tone follows the sample's bytes).
  addSpeechVoice(emu, account, voiceId, 'clone', toneOfSample(sample.bytes));
  if (text === undefined) return {};
  try {
    const preview = await synthesizePreview(emu, account, {
      voiceId,
      text,
      model: body.model!,
      languageBoost: body.language_boost,
      watermark: body.aigc_watermark === true,
    });
    const demoBlob = `speech-files/${account.id}/demo-${emu.ids.stream(`${account.id}:files`).hex(16)}.mp3`;
    await emu.blobs.put(demoBlob, preview.bytes);
    return { preview, demoBlob };
  } catch (err) {
    dropNewSpeechVoice(emu, account, voiceId); // a refused preview leaves no voice behind
    throw err;
  }
}

/** The documented response fields (no `voice_id`, as in the official example). */
export function cloneResponse(result: CloneResult, demoUrl: string) {
  const p = result.preview;
  return {
    input_sensitive: false,
    input_sensitive_type: 0,
    demo_audio: p ? demoUrl : '',
    ...(p
      ? {
          extra_info: (({ audio_length, audio_sample_rate, audio_size, bitrate, word_count, usage_characters }) => ({
            audio_length,
            audio_sample_rate,
            audio_size,
            bitrate,
            word_count,
            usage_characters,
          }))(extraInfo(p.meta, p.plan)),
        }
      : {}),
  };
}
