/**
 * `POST /v1/delete_voice` (speech-current.md section 3, E11): deletes one of the account's cloned or
 * designed voices. Every refusal is 2013 naming `voice_id` (the only documented failure code). After
 * it, the voice leaves `get_voice` and synthesis (2054), and its id stays taken until reset (2039).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { invalidParams } from '../errors.js';
import type { DeleteVoiceBody } from './schema.js';
import { deleteSpeechVoice, findSpeechVoice } from './store.js';
import { findSystemVoice } from './system.js';

const KIND_OF_TYPE = { voice_cloning: 'clone', voice_generation: 'design' } as const;
const TYPE_OF_KIND = { clone: 'voice_cloning', design: 'voice_generation' } as const;

export function deleteVoice(emu: Emulator, account: Account, body: DeleteVoiceBody): { voice_id: string; created_time: string } {
  const id = body.voice_id;
  if (findSystemVoice(emu, id)) throw invalidParams(`voice_id ${id} is a system voice; only cloned and designed voices can be deleted`);
  const voice = findSpeechVoice(emu, id);
  // Unknown, already deleted and another account's voice read the same: nothing is told about others.
  if (!voice || voice.account_id !== account.id) throw invalidParams(`voice_id ${id} is not a cloned or designed voice of this account`);
  if (voice.kind !== KIND_OF_TYPE[body.voice_type])
    throw invalidParams(`voice_id ${id} is a ${voice.kind === 'clone' ? 'cloned' : 'designed'} voice: delete it with voice_type ${TYPE_OF_KIND[voice.kind]}`);
  deleteSpeechVoice(emu, voice);
  // The official example gives Unix seconds as a string; the voice's creation on the emulator clock.
  return { voice_id: id, created_time: String(Math.floor(voice.created_at_ms / 1000)) };
}
