import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';

/**
 * Peer: `eventsource-parser` (v3), the SSE parser under many real clients (the OpenAI and Vercel AI
 * SDKs among them), reading the T2A stream exactly as it arrives on the socket, chunk boundaries and all.
 */
const { emu } = emulatorForFile();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sse-peer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function streamEvents(body: unknown): Promise<{ res: Response; events: EventSourceMessage[] }> {
  const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
    method: 'POST',
    headers: { authorization: 'Bearer sse-peer-key', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return { res, events };
}

describe('eventsource-parser over the T2A stream', () => {
  it('every event is one JSON chunk; intermediates lack extra_info, the final one has it; the hex decodes as MP3', { timeout: 60_000 }, async () => {
    const { res, events } = await streamEvents({
      model: 'speech-02-turbo',
      text: 'Streaming works with a real parser. It reads every event.',
      stream: true,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'mp3', sample_rate: 32000, bitrate: 128000, channel: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const traceId = res.headers.get('trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(events.length).toBeGreaterThanOrEqual(3);

    const chunks = events.map((e) => {
      expect(e.event).toBeUndefined(); // plain `data:` lines, no event names
      return JSON.parse(e.data);
    });
    const final = chunks.at(-1)!;
    const intermediates = chunks.slice(0, -1);
    // Modest event lines (addendum A1: well under 64 KiB; a client had to raise its buffer for long ones).
    for (const e of events.slice(0, -1)) expect(e.data.length).toBeLessThan(32 * 1024);
    for (const c of intermediates) {
      expect(c).not.toHaveProperty('extra_info');
      expect(c.data.status).toBe(1);
      expect(c.data.audio).toMatch(/^(?:[0-9a-f]{2})+$/);
      expect(c.trace_id).toBe(traceId);
      expect(c.base_resp.status_code).toBe(0);
    }
    expect(final.data.status).toBe(2);
    expect(final.extra_info).toMatchObject({ audio_format: 'mp3', audio_sample_rate: 32000, audio_channel: 1 });
    expect(final.trace_id).toBe(traceId);

    // The pieces joined are the whole file, and the final chunk aggregates exactly that file.
    const joined = intermediates.map((c) => c.data.audio).join('');
    expect(final.data.audio).toBe(joined);
    const bytes = Buffer.from(joined, 'hex');
    expect(final.extra_info.audio_size).toBe(bytes.length);

    const file = join(dir, 'stream.mp3');
    await writeFile(file, bytes);
    const probe = (await ffprobe(file)).raw as any;
    expect(probe.streams[0]).toMatchObject({ codec_name: 'mp3', sample_rate: '32000', channels: 1 });
    const durationMs = Number(probe.format.duration) * 1000;
    expect(Math.abs(durationMs - final.extra_info.audio_length)).toBeLessThan(60);
  });

  it('exclude_aggregated_audio: the final event carries an empty audio and still parses', async () => {
    const { events } = await streamEvents({
      model: 'speech-02-turbo',
      text: 'Short one.',
      stream: true,
      stream_options: { exclude_aggregated_audio: true },
      voice_setting: { voice_id: 'female-shaonv' },
      audio_setting: { format: 'pcm', sample_rate: 16000, channel: 1 },
    });
    const chunks = events.map((e) => JSON.parse(e.data));
    const final = chunks.at(-1)!;
    expect(final.data.audio).toBe('');
    expect(final.extra_info.audio_format).toBe('pcm');
    const pcm = Buffer.from(
      chunks
        .slice(0, -1)
        .map((c) => c.data.audio)
        .join(''),
      'hex',
    );
    expect(pcm.length % 2).toBe(0);
    expect(pcm.length).toBe(final.extra_info.audio_size);
  });
});
