import { runTool } from '../helpers/tools.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fft } from '../helpers/audio.js';
import { call, type JsonReply } from '../helpers/emulator.js';

export const VOICE = 'male-qn-qingse';
export const VOICE_B = 'female-shaonv';

export type T2aReply = JsonReply;

/** One `POST /v1/t2a_v2` over a real socket (`raw` is sent as the body instead of `body` as JSON). */
export function t2a(
  baseUrl: string,
  body: unknown,
  opts: { key?: string | null; headers?: Record<string, string>; query?: string; raw?: string } = {},
): Promise<T2aReply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  const key = opts.key === undefined ? 'speech-test-key' : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return call(`${baseUrl}/v1/t2a_v2${opts.query ?? ''}`, { method: 'POST', headers, body: opts.raw ?? JSON.stringify(body) });
}

/** A minimal valid request, overridable. */
export function req(extra: Record<string, unknown> = {}, text = 'Hello world.'): Record<string, unknown> {
  return { model: 'speech-02-turbo', text, voice_setting: { voice_id: VOICE }, ...extra };
}

/** `flac -t` on bytes: resolves when the decoder accepts the file (MD5 included). */
export async function flacTest(bytes: Buffer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'speech-test-'));
  const file = join(dir, 'a.flac');
  writeFileSync(file, bytes);
  try {
    return (await runTool('flac', ['-t', file])).stderr.toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Our own reading of a canonical PCM WAV: header fields and the samples. */
export function parseWav(b: Buffer) {
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let at = 12;
  let fmt: { format: number; channels: number; sampleRate: number; byteRate: number; bits: number } | null = null;
  while (at + 8 <= b.length) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      fmt = {
        format: b.readUInt16LE(at + 8),
        channels: b.readUInt16LE(at + 10),
        sampleRate: b.readUInt32LE(at + 12),
        byteRate: b.readUInt32LE(at + 16),
        bits: b.readUInt16LE(at + 22),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('data before fmt');
      const data = b.subarray(at + 8, at + 8 + size);
      return {
        ...fmt,
        riffSize: b.readUInt32LE(4),
        dataSize: size,
        data,
        frames: data.length / (fmt.channels * 2),
        durationMs: (data.length / (fmt.channels * 2) / fmt.sampleRate) * 1000,
      };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('no data chunk');
}

export { mp3Frames } from '../helpers/mp3.js';

/** Longest run of exact digital silence (all channels zero), in sample frames. */
export function longestSilence(s: Int16Array, channels: number): number {
  let best = 0;
  let run = 0;
  for (let f = 0; f < s.length / channels; f++) {
    let zero = true;
    for (let c = 0; c < channels; c++) if (s[f * channels + c] !== 0) zero = false;
    run = zero ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/** Parses an event-stream body strictly (addendum A1): only `data: <one-line JSON>` + blank line. */
export function strictEvents(body: string): any[] {
  if (!body.endsWith('\n\n')) throw new Error('stream does not end with a blank line');
  const blocks = body.slice(0, -2).split('\n\n');
  return blocks.map((block, i) => {
    if (block.includes('\n')) throw new Error(`event ${i} spans several lines`);
    if (!block.startsWith('data: ')) throw new Error(`event ${i} does not start with "data: "`);
    return JSON.parse(block.slice(6));
  });
}
