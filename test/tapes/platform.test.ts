import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { call, control } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_PLATFORM_VOICE } from './helpers.js';

const tts = (base: string, key: string, path: string, text = 'The platform, recorded.') =>
  call(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: text }),
  });

/** The chunks of a streamed body as they arrived. */
async function chunksOf(base: string, key: string): Promise<Buffer[]> {
  const res = await fetch(`${base}/v1/text-to-speech/stream`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: 'A longer stream, so it comes in several chunks of audio. '.repeat(6) }),
  });
  const out: Buffer[] = [];
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) out.push(Buffer.from(c));
  return out;
}

describe('tapes: platform synthesis and its stream, recorded then replayed', () => {
  const dir = tapeDir();
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let replayer: RunningEmulator;
  let whole: Awaited<ReturnType<typeof tts>>;
  let streamed: Buffer[];

  beforeAll(async () => {
    upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      whole = await tts(recorder.platformUrl, REAL_KEY, '/v1/text-to-speech');
      streamed = await chunksOf(recorder.platformUrl, REAL_KEY);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    replayer = await startReplayer(dir);
  }, 60_000);
  afterAll(async () => {
    await replayer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the whole answer is replayed byte for byte, with its content type', async () => {
    expect(whole.status).toBe(200);
    const r = await tts(replayer.platformUrl, 'ci-key', '/v1/text-to-speech');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(whole.headers.get('content-type'));
    expect(r.bytes.equals(whole.bytes)).toBe(true);
    const probe = await ffprobe(r.bytes);
    expect(probe.durationMs).toBeGreaterThan(500);
  });

  it('the stream is replayed chunk for chunk, and the tape holds its timeline and the audio once', async () => {
    expect(streamed.length).toBeGreaterThan(1);
    const again = await chunksOf(replayer.platformUrl, 'ci-key');
    expect(Buffer.concat(again).equals(Buffer.concat(streamed))).toBe(true);
    const name = readdirSync(dir).find((f) => f.startsWith('platform-post-v1-text-to-speech-stream-'))!;
    const tape = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    expect(tape.answer.stream.kind).toBe('chunks');
    const frames = tape.answer.stream.steps;
    expect(frames.length).toBeGreaterThan(1);
    expect(new Set(frames.map((s: any) => s.frame.$file)).size).toBe(1);
    expect(frames.every((s: any, i: number) => s.dir === 'out' && (i === 0 || s.t_ms >= frames[i - 1].t_ms))).toBe(true);
  });

  it('a fault of the request applies to the replayed stream: cut_after_chunks=1 cuts it after one chunk', async () => {
    const res = await fetch(`${replayer.platformUrl}/v1/text-to-speech/stream`, {
      method: 'POST',
      headers: { 'x-api-key': 'ci-key', 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=1' },
      body: JSON.stringify({ voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: 'A longer stream, so it comes in several chunks of audio. '.repeat(6) }),
    });
    let got = 0;
    await expect(
      (async () => {
        for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) got += c.length;
      })(),
    ).rejects.toThrow();
    expect(got).toBeLessThan(Buffer.concat(streamed).length);
    const entry = (await control(replayer.speechUrl).journal({ limit: 1 })).body.entries[0];
    expect(entry.tape.mode).toBe('replayed');
    expect(entry.note).toMatch(/cut after 1 chunk/);
  });
});
