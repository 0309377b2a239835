/** Wire shapes of REST conversation sessions and characters. */
import * as z from 'zod';

export const createBody = z.object(
  { voice_id: z.string({ error: 'is required and must be a string (a role id)' }).min(1, { error: 'must not be empty' }) },
  { error: 'request body must be a JSON object' },
);

export const deleteParams = z.object({ session_id: z.string().min(1, { error: 'must not be empty' }) });

export interface SessionData {
  session_id: string;
  voice_id: string;
  /** Unix seconds. */
  created_at: number;
}

/** One entry of GET /api/v1/audio/characters (the role's internal voice stays internal). */
export interface Character {
  id: string;
  name: string;
  language: string;
  description: string;
}
