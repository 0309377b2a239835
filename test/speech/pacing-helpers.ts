/**
 * What the pacing and audio-fault tests of the T2A stream share: a stream read event by event with
 * the wall time each arrived, and the audio it carried.
 */
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { req } from './helpers.js';

export interface TimedEvent {
  /** Wall ms after the request was sent. */
  at: number;
  body: any;
}

export interface ReadStream {
  events: TimedEvent[];
  /** Wall ms from the request to the end of the body. */
  total: number;
  broken: boolean;
}

export async function streamT2a(
  url: string,
  body: Record<string, unknown>,
  opts: { key?: string; fault?: string; signal?: AbortSignal; onEvent?: (e: TimedEvent) => void } = {},
): Promise<ReadStream> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/t2a_v2`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${opts.key ?? 'pacing-key'}`,
      ...(opts.fault ? { 'x-emulator-fault': opts.fault } : {}),
    },
    body: JSON.stringify({ ...req({ stream: true }), ...body }),
    signal: opts.signal,
  });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  const events: TimedEvent[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let broken = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!line.startsWith('data: ')) continue;
        const e = { at: performance.now() - started, body: JSON.parse(line.slice(6)) };
        events.push(e);
        opts.onEvent?.(e);
      }
    }
  } catch {
    broken = true;
  }
  return { events, total: performance.now() - started, broken };
}

/** The intermediate events' audio, joined (hex decoded as it came). */
export function chunkAudio(stream: ReadStream): Buffer {
  return Buffer.concat(stream.events.filter((e) => e.body.data?.status === 1).map((e) => Buffer.from(e.body.data.audio, 'hex')));
}

/** The intermediate events' hex strings. */
export function chunkHex(stream: ReadStream): string[] {
  return stream.events.filter((e) => e.body.data?.status === 1).map((e) => e.body.data.audio as string);
}

/** Text of about `seconds` of speech at the emulator's pace. */
export function textOf(words: number): string {
  const base = 'the quick brown fox jumps over the lazy dog while seven calm voices read the morning news aloud'.split(' ');
  return Array.from({ length: words }, (_, i) => base[i % base.length]).join(' ') + '.';
}

/** What a listener heard in 16 kHz mono PCM, as `POST /_emulator/hear` tells it. */
export async function hear(speechUrl: string, pcm: Buffer): Promise<any> {
  const res = await fetch(`${speechUrl}/_emulator/hear`, { method: 'POST', headers: { 'content-type': 'audio/pcm;rate=16000' }, body: pcm });
  expect(res.status).toBe(200);
  return res.json();
}
