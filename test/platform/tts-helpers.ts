import { pcm16Wav } from '../helpers/audio.js';
import { call } from '../helpers/emulator.js';
import { ffprobe as probe } from '../helpers/ffprobe.js';

/** Helpers of the platform synthesis, voice and upload tests. */

/** `call` on one platform listener with a key in `x-api-key` (none when the key is empty). */
export function api(base: string, key: string) {
  return (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'x-api-key': key, ...init.headers };
    if (!key) delete headers['x-api-key'];
    return call(base + path, { ...init, headers });
  };
}

export interface Probed {
  codec: string;
  sampleRate: number;
  channels: number;
  bits: number;
  durationS: number;
}

/** What ffprobe finds in the bytes, saved as a file the way a user saves a download. */
export async function ffprobe(bytes: Buffer): Promise<Probed> {
  const p = await probe(bytes, { ext: 'wav' });
  return { codec: p.codec, sampleRate: p.sampleRate, channels: p.channels, bits: p.bits, durationS: (p.streamDurationMs ?? p.durationMs) / 1000 };
}

/** Float32 mono samples of a 16-bit mono WAV or raw PCM body. */
export function samplesOf(bytes: Buffer, wav: boolean): Float32Array {
  const data = wav ? bytes.subarray(44) : bytes;
  const out = new Float32Array(data.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = data.readInt16LE(i * 2) / 32768;
  return out;
}

/** A small valid 16 kHz mono WAV of `seconds` (a tone), for reference audio uploads. */
export function toneWav(seconds: number, rate = 16000): Buffer {
  const n = Math.round(seconds * rate);
  const b = pcm16Wav(n * 2, rate);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return b;
}

/** Uploads bytes with multipart (scene first unless told), answering the parsed envelope. */
export async function upload(
  base: string,
  key: string,
  bytes: Buffer | null,
  opts: { scene?: string | null; name?: string; sceneLast?: boolean; query?: string } = {},
) {
  const form = new FormData();
  const scene = opts.scene === undefined ? 'audio' : opts.scene;
  if (scene !== null && !opts.sceneLast) form.append('scene', scene);
  if (bytes) form.append('file', new Blob([bytes]), opts.name ?? 'ref.wav');
  if (scene !== null && opts.sceneLast) form.append('scene', scene);
  const res = await fetch(`${base}/v1/files/upload${opts.query ?? ''}`, { method: 'POST', headers: key ? { 'x-api-key': key } : {}, body: form });
  return { status: res.status, body: (await res.json()) as any };
}
