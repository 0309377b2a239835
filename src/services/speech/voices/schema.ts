import * as z from 'zod';

/** `POST /v1/get_voice` (speech-beyond.md section 2, rule 12.8). */
export const VOICE_TYPES = ['system', 'voice_cloning', 'voice_generation', 'all'] as const;

export const getVoiceBody = z.looseObject({
  voice_type: z.enum(VOICE_TYPES, { error: (i) => (i.input === undefined ? 'is required' : `must be one of ${VOICE_TYPES.join(', ')}`) }),
});

/** `POST /v1/delete_voice` (speech-current.md section 3, E11): only cloned and designed voices. */
export const DELETE_VOICE_TYPES = ['voice_cloning', 'voice_generation'] as const;

export const deleteVoiceBody = z.looseObject({
  voice_type: z.enum(DELETE_VOICE_TYPES, {
    error: (i) => (i.input === undefined ? 'is required' : `must be one of ${DELETE_VOICE_TYPES.join(', ')} (only cloned and designed voices can be deleted)`),
  }),
  voice_id: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).min(1, 'must not be empty'),
});
export type DeleteVoiceBody = z.output<typeof deleteVoiceBody>;
