// Calls of `POST /v1/speech_to_text` with a real multipart body (FormData through undici), and the
// emulator's own audio with its subtitle times to compare transcripts with.
import { expect } from 'vitest';
import { call, readReply, type JsonReply } from '../../helpers/emulator.js';
import { req, t2a } from '../helpers.js';

export const STT_KEY = 'stt-test-key';

export interface SttCall {
  /** Text parts in order (`model` defaults to asr-1.0 unless given, null leaves it out). */
  fields?: Record<string, string | null>;
  /** File parts (name `file` unless given); none when empty. */
  files?: { bytes: Buffer; name?: string; filename?: string }[];
  key?: string | null;
  headers?: Record<string, string>;
}

export function sttForm(opts: SttCall): FormData {
  const form = new FormData();
  const fields: Record<string, string | null> = { model: 'asr-1.0', ...opts.fields };
  for (const [name, value] of Object.entries(fields)) if (value !== null) form.append(name, value);
  // As mmx sends it: a Blob with no type (application/octet-stream) named by the file's base name.
  for (const f of opts.files ?? []) form.append(f.name ?? 'file', new Blob([new Uint8Array(f.bytes)]), f.filename ?? 'audio.bin');
  return form;
}

export function stt(baseUrl: string, opts: SttCall): Promise<JsonReply> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? STT_KEY : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return call(`${baseUrl}/v1/speech_to_text`, { method: 'POST', headers, body: sttForm(opts) });
}

/** One file, with fields. */
export const sttFile = (baseUrl: string, bytes: Buffer, fields: Record<string, string | null> = {}, extra: Omit<SttCall, 'files' | 'fields'> = {}) =>
  stt(baseUrl, { ...extra, fields, files: [{ bytes }] });

/** The streamed answer read whole, with its events parsed. */
export async function sttStream(baseUrl: string, bytes: Buffer, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}/v1/speech_to_text`, {
    method: 'POST',
    headers: { authorization: `Bearer ${STT_KEY}`, ...headers },
    body: sttForm({ fields: { stream: 'true', ...fields }, files: [{ bytes }] }),
  });
  const reply = await readReply(res);
  const blocks = reply.text.split('\n\n').filter(Boolean);
  return { ...reply, blocks, events: blocks.map((b) => JSON.parse(b.replace(/^data: /, '')) as Record<string, unknown>) };
}

export interface Spoken {
  wav: Buffer;
  /** Sentence times of the synthesis's subtitle file, in seconds. */
  sentences: { text: string; start: number; end: number }[];
  durationMs: number;
}

/** The emulator's own audio of `text` (WAV) with the subtitle file's sentence times. */
export async function speak(baseUrl: string, text: string, extra: Record<string, unknown> = {}): Promise<Spoken> {
  const res = await t2a(baseUrl, req({ audio_setting: { format: 'wav', sample_rate: 32000 }, subtitle_enable: true, ...extra }, text), { key: STT_KEY });
  expect(res.body.base_resp.status_code).toBe(0);
  const subtitles = (await call(res.body.data.subtitle_file)).body as { text: string; time_begin: number; time_end: number }[];
  return {
    wav: Buffer.from(res.body.data.audio, 'hex'),
    sentences: subtitles.map((s) => ({ text: s.text, start: s.time_begin / 1000, end: s.time_end / 1000 })),
    durationMs: res.body.extra_info.audio_length,
  };
}

/** Checks the error body of section 1.6: real status, type, message, `http_code` string, `request_id` = Trace-Id. */
export function expectSttError(res: JsonReply, status: number, type: string, message: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['type', 'error', 'request_id']);
  expect(res.body.type).toBe('error');
  expect(res.body.error.type).toBe(type);
  expect(res.body.error.http_code).toBe(String(status));
  if (typeof message === 'string') expect(res.body.error.message).toBe(message);
  else expect(res.body.error.message).toMatch(message);
  expect(res.body.request_id).toMatch(/^[0-9a-f]{32}$/);
  expect(res.headers.get('trace-id')).toBe(res.body.request_id);
  expect(res.body.base_resp).toBeUndefined();
}
