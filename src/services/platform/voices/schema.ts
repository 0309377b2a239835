/** Wire shapes of voice cloning. Types only (with messages naming the rule); the model checks the rest. */
import * as z from 'zod';
import { optionalString, requiredString } from '../shared/strings.js';

export const VOICE_ID = /^[a-z0-9_-]{1,64}$/;

export const voiceSaveSchema = z.object(
  {
    voice_id: requiredString().describe('Name of the custom voice: lowercase letters, digits, - and _, at most 64 characters.'),
    ref_audio: optionalString().describe('Public http(s) URL of the reference audio, or an object_key from /v1/files/upload made with the same API key.'),
    ref_text: optionalString().describe('Text spoken in the reference audio, at most 500 characters; given together with ref_audio.'),
  },
  { error: () => 'request body must be a JSON object' },
);

export type VoiceSaveRequest = z.output<typeof voiceSaveSchema>;

/** A repeated query parameter reads as its values joined by commas; the model checks page_size's range. */
const queryText = (schema: z.ZodOptional<z.ZodString>) => z.preprocess((v) => (Array.isArray(v) ? v.join(',') : v), schema);

export const voiceListQuerySchema = z.object({
  voice_id: queryText(z.string().optional()).describe('Start the page at this voice id (the next_voice_id of the previous page).'),
  page_size: queryText(z.string().optional()).describe('Items per page, 1 to 20, default 20.'),
});

export const voiceDeleteParamsSchema = z.object({ voice_id: z.string() });

export interface VoiceListItem {
  voice_id: string;
  voice_url: string;
  created_at: number;
}

export interface VoiceListData {
  list: VoiceListItem[];
  total: number;
  next_voice_id: string;
  has_more: boolean;
}
