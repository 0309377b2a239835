import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { t2a } from '../speech/helpers.js';
import { REAL_KEY, sseEvents, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_VOICE } from './helpers.js';

const FORMATS = ['mp3', 'wav', 'pcm', 'flac'] as const;
/** The formats the service streams (a WAV stream is refused, 2013). */
const STREAM_FORMATS = ['mp3', 'pcm', 'flac'] as const;
const body = (format: string, stream: boolean, text = 'Recorded once, replayed forever.') => ({
  model: 'speech-02-turbo',
  text,
  stream,
  voice_setting: { voice_id: UPSTREAM_VOICE },
  audio_setting: { format, sample_rate: 24000 },
});

describe('tapes: T2A recorded from an upstream, replayed offline', () => {
  const dir = tapeDir();
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let replayer: RunningEmulator;
  const recorded = new Map<string, { status: number; text: string; hex: string[] }>();

  beforeAll(async () => {
    upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      for (const format of FORMATS)
        for (const stream of (STREAM_FORMATS as readonly string[]).includes(format) ? [false, true] : [false]) {
          const r = await t2a(recorder.speechUrl, body(format, stream), { key: REAL_KEY });
          const hex = stream ? sseEvents(r.text).map((e) => e.data?.audio ?? '') : [r.body.data.audio];
          recorded.set(`${format}:${stream}`, { status: r.status, text: r.text, hex });
        }
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

  it('the recording answered what the upstream answered (its own voice)', () => {
    for (const [k, r] of recorded) {
      expect(r.status, k).toBe(200);
      expect(r.hex.join('').length, k).toBeGreaterThan(100);
    }
  });

  it('no file of the tape folder holds the key', () => {
    const files = [...readdirSync(dir).map((f) => join(dir, f)), ...readdirSync(join(dir, 'files')).map((f) => join(dir, 'files', f))].filter(
      (f) => !f.endsWith('files'),
    );
    expect(files.length).toBeGreaterThan(8);
    for (const f of files) expect(readFileSync(f).includes(REAL_KEY), f).toBe(false);
  });

  for (const format of FORMATS)
    it(`whole ${format}: the replayed audio is the recorded audio byte for byte, with a fresh trace id`, async () => {
      const r = await t2a(replayer.speechUrl, body(format, false), { key: 'ci-key' });
      const was = recorded.get(`${format}:false`)!;
      expect(r.status).toBe(200);
      expect(r.body.base_resp.status_code).toBe(0);
      expect(r.body.data.audio).toBe(was.hex[0]);
      expect(r.body.trace_id).not.toBe(JSON.parse(was.text).trace_id);
      if (format !== 'pcm') {
        const probe = await ffprobe(Buffer.from(r.body.data.audio, 'hex'));
        expect(probe.codec).toBe({ mp3: 'mp3', wav: 'pcm_s16le', flac: 'flac' }[format]);
        expect(probe.sampleRate).toBe(24000);
      }
    });

  for (const format of STREAM_FORMATS)
    it(`streamed ${format}: the replayed events are the recorded ones, event for event`, async () => {
      const r = await t2a(replayer.speechUrl, body(format, true), { key: 'ci-key' });
      const was = recorded.get(`${format}:true`)!;
      const events = sseEvents(r.text);
      expect(events.map((e) => e.data?.audio ?? '')).toEqual(was.hex);
      expect(events.map((e) => e.data?.status)).toEqual(sseEvents(was.text).map((e) => e.data?.status));
      expect(events.at(-1).extra_info).toEqual(sseEvents(was.text).at(-1).extra_info);
    });

  it('the journal says which tape answered', async () => {
    await t2a(replayer.speechUrl, body('mp3', false), { key: 'journal-key' });
    const list = (await control(replayer.speechUrl).journal({ limit: 1 })).body;
    const entry = (list.entries ?? list)[0];
    expect(entry.tape.mode).toBe('replayed');
    expect(entry.tape.id).toMatch(/^speech-post-v1-t2a-v2-[0-9a-f]{10}-1$/);
    expect(readdirSync(dir)).toContain(`${entry.tape.id}.json`);
  });

  it('a request no tape matches falls through to the emulator, which does not know the voice', async () => {
    const r = await t2a(replayer.speechUrl, body('mp3', false, 'Never recorded.'), { key: 'ci-key' });
    expect(r.body.base_resp.status_code).toBe(2054);
  });
});
