/** `POST /v1/voice_clone` (speech-beyond.md section 4, rule 12.10). Unknown keys are accepted and ignored. */
import * as z from 'zod';
import { idField } from '../files/schema.js';

const str = (max?: number) => {
  const s = z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') });
  return max === undefined ? s : s.max(max, `must be at most ${max} characters`);
};
const bool = () => z.boolean({ error: 'must be a boolean' }).nullish();

export const cloneBody = z.looseObject({
  file_id: idField,
  voice_id: str(),
  clone_prompt: z.looseObject({ prompt_audio: idField, prompt_text: str() }, { error: 'must be an object with prompt_audio and prompt_text' }).nullish(),
  text: str(1000).nullish(),
  model: str().nullish(),
  language_boost: z.string({ error: 'must be a string' }).nullish(),
  text_validation: str(200).nullish(),
  accuracy: z.number({ error: 'must be a number' }).min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]').nullish(),
  need_noise_reduction: bool(),
  need_volume_normalization: bool(),
  aigc_watermark: bool(),
});
export type CloneBody = z.output<typeof cloneBody>;
