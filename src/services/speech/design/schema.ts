/** `POST /v1/voice_design` (speech-beyond.md section 5, rule 12.11). */
import * as z from 'zod';

const required = (i: { input: unknown }) => (i.input === undefined ? 'is required' : 'must be a string');

export const designBody = z.looseObject({
  prompt: z.string({ error: required }).refine((s) => s.trim() !== '', 'must not be empty'),
  preview_text: z
    .string({ error: required })
    .refine((s) => s.trim() !== '', 'must not be empty')
    .refine((s) => [...s].length <= 500, 'must be at most 500 characters'),
  voice_id: z.string({ error: 'must be a string' }).nullish(),
  aigc_watermark: z.boolean({ error: 'must be a boolean' }).nullish(),
});
export type DesignBody = z.output<typeof designBody>;
