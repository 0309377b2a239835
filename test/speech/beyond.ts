import { FormData, fetch as undiciFetch } from 'undici';
import { call, control, readReply, type JsonReply } from '../helpers/emulator.js';

/**
 * Helpers for the speech operations beyond `/v1/t2a_v2` (voices, files, cloning, design, async):
 * JSON calls with a Bearer key, multipart uploads through undici's FormData, and sample audio made by
 * the emulator itself (so its recognition knows what the sample says).
 */
export type Answer = JsonReply;

/** Latin text the engine reads at about 14 characters a second: n repeats last about 3.3 s each. */
export const PANGRAM = 'The quick brown fox jumps over the lazy dog. ';

export function speechApi(base: string, key: string | null = 'beyond-key') {
  const auth: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const api = {
    base,
    key,
    post: (path: string, json: unknown, headers: Record<string, string> = {}) =>
      call(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: JSON.stringify(json) }),
    raw: (path: string, init: { method?: string; headers?: Record<string, string>; body?: string | globalThis.FormData }) =>
      call(`${base}${path}`, { ...init, headers: { ...auth, ...init.headers } }),
    get: (path: string, headers: Record<string, string> = {}) => call(`${base}${path}`, { headers: { ...auth, ...headers } }),
    getBytes: (path: string) => call(`${base}${path}`, { headers: auth }),
    /** `POST /v1/files/upload` with the parts given (undefined parts are left out); a Blob (a file on disk) is streamed. */
    upload: async (purpose: string | undefined, bytes: Buffer | Blob | undefined, filename = 'sample.wav') => {
      const form = new FormData();
      if (purpose !== undefined) form.append('purpose', purpose);
      if (bytes !== undefined) form.append('file', bytes instanceof Blob ? bytes : new Blob([bytes]), filename);
      const res = await undiciFetch(`${base}/v1/files/upload`, { method: 'POST', headers: auth, body: form });
      return readReply(res as never);
    },
    /** Audio made by `/v1/t2a_v2` (hex output), as bytes. */
    audio: async (text: string, opts: { format?: string; sampleRate?: number; voice?: string } = {}) => {
      const r = await api.post('/v1/t2a_v2', {
        model: 'speech-02-hd',
        text,
        voice_setting: { voice_id: opts.voice ?? 'female-shaonv' },
        audio_setting: { format: opts.format ?? 'wav', sample_rate: opts.sampleRate ?? 16000 },
      });
      if (r.body?.base_resp?.status_code !== 0) throw new Error(`t2a failed: ${r.text}`);
      return Buffer.from(r.body.data.audio, 'hex');
    },
    /** Uploads audio and answers its file id. */
    uploadAudio: async (purpose: string, bytes: Buffer, filename = 'sample.wav') => {
      const r = await api.upload(purpose, bytes, filename);
      if (r.body?.base_resp?.status_code !== 0) throw new Error(`upload failed: ${r.text}`);
      return r.body.file.file_id as number;
    },
    /** A successful clone of a new sample (about 13 s) under `voiceId`. */
    clone: async (voiceId: string, extra: Record<string, unknown> = {}) => {
      const fileId = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
      return api.post('/v1/voice_clone', { file_id: fileId, voice_id: voiceId, ...extra });
    },
    speak: (voiceId: string, text = 'Hello there.') => api.post('/v1/t2a_v2', { model: 'speech-02-hd', text, voice_setting: { voice_id: voiceId } }),
  };
  return api;
}

export const codeOf = (a: Answer) => a.body?.base_resp?.status_code as number;
export const msgOf = (a: Answer) => a.body?.base_resp?.status_msg as string;

/** The state view's resources of the account that owns a key (found by its redacted label). */
export async function resourcesOf(base: string, area: string, match: (items: any[]) => boolean): Promise<any[]> {
  const s = await control(base).state();
  for (const a of s.body.accounts) {
    const items = a.resources?.[area];
    if (Array.isArray(items) && match(items)) return items;
  }
  return [];
}

export { zipOf } from '../helpers/zip.js';
