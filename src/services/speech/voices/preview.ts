import { encodeAudio, synthesizeStreamSliced, type AudioMeta } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { speechRecord } from '../../../core/state/signatures.js';
import { chargeRequest, checkOutputSize, planRequest, readRequest, type SynthesisPlan } from '../model.js';

/**
 * The preview a new voice reads (clone `demo_audio`, design `trial_audio`): MP3, 32 kHz, 128 kbps, mono,
 * planned by the T2A rules and billed at T2A prices. A preview does not count as use of the voice
 * (its signature is recorded without marking the voice used).
 */
export interface Preview {
  bytes: Buffer;
  meta: AudioMeta;
  plan: SynthesisPlan;
}

export async function synthesizePreview(
  emu: Emulator,
  account: Account,
  input: { voiceId: string; text: string; model: string; languageBoost?: string | null; watermark?: boolean },
): Promise<Preview> {
  const plan = planRequest(
    emu,
    account,
    readRequest({
      model: input.model,
      text: input.text,
      voice_setting: { voice_id: input.voiceId },
      audio_setting: { format: 'mp3', sample_rate: 32000, bitrate: 128000, channel: 1 },
      ...(input.languageBoost ? { language_boost: input.languageBoost } : {}),
      aigc_watermark: input.watermark === true,
    }),
  );
  const synth = await synthesizeStreamSliced(plan.input);
  checkOutputSize(plan, synth.durationMs);
  chargeRequest(emu, account, plan);
  const encoded = await encodeAudio('mp3', synth, { sampleRate: 32000, channels: 1, bitrate: 128000 });
  emu.signatures.put(speechRecord({ text: plan.input.text, language: plan.language, voices: plan.voiceIds, summary: synth, atMs: emu.clock.now() }));
  emu.markDirty('accounts', account.id, account.id);
  return { bytes: encoded.bytes, meta: encoded.meta, plan };
}
