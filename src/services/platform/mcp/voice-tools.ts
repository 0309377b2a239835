/**
 * voice_save, voice_list, voice_delete: the voice cloning operations (capability `cloning`, codes of
 * the voice table, success text `success`). Results are the operation's envelope as JSON text.
 */
import * as z from 'zod';
import { ok, PlatformError } from '../envelope.js';
import { deleteVoice, listVoices, MAX_PAGE_SIZE, saveVoice, voiceDeleteParamsSchema, voiceSaveSchema } from '../voices/model.js';
import { defineTool, type ToolDef } from './tool-kit.js';

const ENVELOPE_NOTE =
  'The result text is the JSON envelope of the HTTP operation ({error_code, error_message, succeed, data}); failures come back with isError true: ' +
  '10001 bad argument, 10003 bad key or missing cloning capability';

/** voice_list takes only apiKey (spec): it answers the whole list, which never exceeds one page of 20. */
const voiceListArgs = z.object({});

const voiceDeleteArgs = voiceDeleteParamsSchema.extend({
  voice_id: voiceDeleteParamsSchema.shape.voice_id.describe(
    'The custom voice to delete. Deleting an id that is not a custom voice of this key succeeds and changes nothing; system voices are never removed.',
  ),
});

export function voiceTools(): ToolDef[] {
  return [
    defineTool({
      name: 'voice_save',
      description:
        'Clone a voice: save (or overwrite) a custom voice of this API key from a reference recording, as POST /v1/voice/save does. ' +
        'Required: apiKey, voice_id (the new name: lowercase letters, digits, - and _, at most 64), ref_audio (a public http(s) URL of MP3/WAV/M4A audio, at most 30 seconds and 50 MB, ' +
        'or an object_key from file upload with the same key) and ref_text (the words spoken in it, at most 500 characters). At most 5 custom voices per key. ' +
        'Afterwards pass voice_id to text_to_speech_generate. ' +
        `${ENVELOPE_NOTE}, 10017 five custom voices already exist, 10018 the name of a system voice, 20012 reference audio unreadable or too long.`,
      args: voiceSaveSchema,
      family: 'voice',
      capability: 'cloning',
      run: async ({ emu }, account, args) => ok(await saveVoice(emu, account, args), 'success'),
    }),
    defineTool({
      name: 'voice_list',
      description:
        'List the custom (cloned) voices of this API key, as GET /v1/voice/list does; takes only apiKey. ' +
        'data.list holds voice_id, voice_url (signed link to the reference audio) and created_at (Unix seconds) of every custom voice. ' +
        `${ENVELOPE_NOTE}.`,
      args: voiceListArgs,
      family: 'voice',
      capability: 'cloning',
      run: async ({ emu }, account) => ok(listVoices(emu, account, { page_size: MAX_PAGE_SIZE }), 'success'),
    }),
    defineTool({
      name: 'voice_delete',
      description:
        'Delete a custom voice of this API key, as DELETE /v1/voice/{voice_id} does. Required: apiKey, voice_id. Idempotent: an unknown id also succeeds. ' +
        `${ENVELOPE_NOTE}.`,
      args: voiceDeleteArgs,
      family: 'voice',
      capability: 'cloning',
      run: async ({ emu }, account, args) => {
        const voiceId = args.voice_id;
        if (!voiceId.trim()) throw new PlatformError('param', 'voice_id: is required and must not be empty');
        return ok(await deleteVoice(emu, account, voiceId), 'success');
      },
    }),
  ];
}
