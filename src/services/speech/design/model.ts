/** Voice design (rule 12.11): an id, a tone from the prompt's words, a preview read with it. */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { checkNewVoiceId, checkVoiceIdFree } from '../voices/ids.js';
import { synthesizePreview } from '../voices/preview.js';
import { addSpeechVoice, dropNewSpeechVoice, voiceRecord } from '../voices/store.js';
import type { DesignBody } from './schema.js';
import { designedTone } from './timbre.js';

const PREVIEW_MODEL = 'speech-02-hd';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `ttv-voice-` + the clock's `yyyyMMddHHmmss` + 2 digits + `-` + 8 seeded alphanumerics. */
function generatedId(emu: Emulator, account: Account): string {
  const stamp = new Date(emu.clock.now()).toISOString().replace(/\D/g, '').slice(0, 14);
  for (;;) {
    const bytes = emu.ids.stream(`${account.id}:voices`).bytes(10);
    const digits = String(bytes[0]! % 100).padStart(2, '0');
    const tail = [...bytes.subarray(2)].map((b) => ALNUM[b % ALNUM.length]).join('');
    const id = `ttv-voice-${stamp}${digits}-${tail}`;
    if (!voiceRecord(emu, id)) return id;
  }
}

export async function designVoice(emu: Emulator, account: Account, body: DesignBody): Promise<{ voice_id: string; trial_audio: string }> {
  let voiceId: string;
  if (body.voice_id) {
    checkNewVoiceId(emu, body.voice_id);
    checkVoiceIdFree(emu, body.voice_id);
    voiceId = body.voice_id;
  } else voiceId = generatedId(emu, account);
  addSpeechVoice(emu, account, voiceId, 'design', designedTone(body.prompt));
  try {
    const preview = await synthesizePreview(emu, account, { voiceId, text: body.preview_text, model: PREVIEW_MODEL, watermark: body.aigc_watermark === true });
    return { voice_id: voiceId, trial_audio: preview.bytes.toString('hex') };
  } catch (err) {
    dropNewSpeechVoice(emu, account, voiceId); // a refused preview leaves no voice behind
    throw err;
  }
}
