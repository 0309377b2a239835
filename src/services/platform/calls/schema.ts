/** Wire shapes of the real-time call operations (`/v1/audio/assistant/*`). */
import * as z from 'zod';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Sample rates a client may announce for its uploaded audio. */
export const SAMPLE_RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000] as const;

const sessionId = z.string({ error: 'is required and must be a string' }).trim().min(1, { error: 'must not be empty' });

export const startBody = z.object(
  {
    client_nonce: z.string({ error: 'is required and must be a UUID string' }).regex(UUID, { error: 'must be a UUID (8-4-4-4-12 hexadecimal digits)' }),
    timbre: z.string({ error: 'must be a string (a role id)' }).min(1, { error: 'must not be empty' }).nullish(),
    language: z.enum(['zh', 'en'], { error: 'must be zh or en' }).nullish(),
    sample_rate: z
      .int({ error: 'must be an integer' })
      .refine((r) => (SAMPLE_RATES as readonly number[]).includes(r), { error: `must be one of ${SAMPLE_RATES.join(', ')}` })
      .nullish(),
    previous_session_id: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).nullish(),
  },
  { error: 'request body must be a JSON object' },
);
export type StartBody = z.infer<typeof startBody>;

export const heartbeatBody = z.object({ session_id: sessionId }, { error: 'request body must be a JSON object' });

export const stopBody = z.object(
  {
    session_id: sessionId,
    reason: z.string({ error: 'must be a string' }).max(256, { error: 'must be at most 256 characters' }).nullish(),
  },
  { error: 'request body must be a JSON object' },
);

export interface StartData {
  session_id: string;
  rtc_url: string;
  room_name: string;
  identity: string;
  token: string;
  bot_identity: string;
  expire_at: number;
}

export interface HeartbeatData {
  should_close: boolean;
  remaining_seconds: number;
  elapsed_seconds: number;
}

export interface StopData {
  total_sec: number;
  total_billed: number;
}
