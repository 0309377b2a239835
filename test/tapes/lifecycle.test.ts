import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { call, control } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { t2a } from '../speech/helpers.js';
import { REAL_KEY, sseEvents, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_PLATFORM_VOICE, UPSTREAM_VOICE } from './helpers.js';

const streamBody = {
  model: 'speech-02-turbo',
  text: 'A stream of several chunks, recorded with its timing. '.repeat(3),
  stream: true,
  voice_setting: { voice_id: UPSTREAM_VOICE },
};
const wavBody = {
  model: 'speech-02-turbo',
  text: 'Listen to me.',
  voice_setting: { voice_id: UPSTREAM_VOICE },
  audio_setting: { format: 'wav', sample_rate: 16000 },
};
const platformStream = (base: string, fault?: string) =>
  fetch(`${base}/v1/text-to-speech/stream`, {
    method: 'POST',
    headers: { 'x-api-key': 'ci', 'content-type': 'application/json', ...(fault ? { 'x-emulator-fault': fault } : {}) },
    body: JSON.stringify({ voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: 'Cut me short, please, somewhere in the middle. '.repeat(4) }),
  });

describe("tapes: replayed answers go through the same lifecycle as the emulator's own", () => {
  const dir = tapeDir();
  let recordedEvents: any[] = [];
  let recordedWav: Buffer;
  let replayer: RunningEmulator;

  beforeAll(async () => {
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      recordedEvents = sseEvents((await t2a(recorder.speechUrl, streamBody, { key: REAL_KEY })).text);
      recordedWav = Buffer.from((await t2a(recorder.speechUrl, wavBody, { key: REAL_KEY })).body.data.audio, 'hex');
      const res = await platformStream(recorder.platformUrl);
      await res.arrayBuffer();
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

  it('audio faults change the real audio: hex_odd=1 leaves the first chunk one hex digit short, the rest as recorded', async () => {
    expect(recordedEvents.length).toBeGreaterThan(2);
    const r = await t2a(replayer.speechUrl, streamBody, { key: 'ci', headers: { 'x-emulator-fault': 'hex_odd=1' } });
    const events = sseEvents(r.text);
    expect(events[0].data.audio).toBe(recordedEvents[0].data.audio.slice(0, -1));
    expect(events.slice(1).map((e) => e.data.audio)).toEqual(recordedEvents.slice(1).map((e) => e.data.audio));
    const entry = (await control(replayer.speechUrl).journal({ limit: 1 })).body.entries[0];
    expect(entry.tape.mode).toBe('replayed');
    expect(entry.fault).toBeDefined();
    expect(entry.note).toMatch(/hex_odd=1/);
  });

  it('a pace fault holds the first replayed audio back (ttfa_ms), and cut_after_chunks cuts the replayed event stream', async () => {
    const started = performance.now();
    const r = await fetch(`${replayer.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer ci', 'content-type': 'application/json', 'x-emulator-fault': 'ttfa_ms=600' },
      body: JSON.stringify(streamBody),
    });
    const reader = r.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    await reader.cancel();
    const cut = await fetch(`${replayer.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer ci', 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=2' },
      body: JSON.stringify(streamBody),
    });
    await expect(cut.text()).rejects.toThrow();
  });

  it("rtf paces the replayed audio as the emulator's own: the last chunk waits until the audio before it played at rtf", async () => {
    const timed = async (send: () => Promise<Buffer>) => {
      const started = performance.now();
      const bytes = await send();
      return { ms: performance.now() - started, bytes };
    };
    // The event stream: its audio's length as the service said it, shared among the events by their bytes.
    const audioMs = recordedEvents.at(-1).extra_info.audio_length as number;
    const chunkBytes = recordedEvents.map((e) => (e.data.audio?.length ?? 0) / 2);
    const total = chunkBytes.reduce((a, b) => a + b, 0);
    const rtf = Math.max(2, Math.round(audioMs / 800));
    const sse = (fault?: string) => async () =>
      Buffer.from((await t2a(replayer.speechUrl, streamBody, { key: 'ci', headers: fault ? { 'x-emulator-fault': fault } : {} })).text);
    const fast = await timed(sse());
    const paced = await timed(sse(`rtf=${rtf}`));
    const due = (audioMs * (total - chunkBytes.at(-1)!)) / total / rtf;
    expect(paced.ms).toBeGreaterThanOrEqual(due * 0.95);
    expect(fast.ms).toBeLessThan(due);
    expect(sseEvents(paced.bytes.toString()).map((e) => e.data.audio)).toEqual(recordedEvents.map((e) => e.data.audio));
    // The chunked platform stream: its audio's length read from its MP3 headers.
    const name = readdirSync(dir).find((f) => f.startsWith('platform-post-v1-text-to-speech-stream'))!;
    const frames = JSON.parse(readFileSync(join(dir, name), 'utf8')).answer.stream.steps.map((s: any) => s.frame.bytes as number);
    expect(frames.length).toBeGreaterThan(2);
    const whole = await timed(async () => Buffer.from(await (await platformStream(replayer.platformUrl)).arrayBuffer()));
    const wholeMs = (await ffprobe(whole.bytes, { ext: 'mp3' })).durationMs;
    const platformRtf = Math.max(2, Math.round(wholeMs / 800));
    const platformDue = (wholeMs * (whole.bytes.length - frames.at(-1))) / whole.bytes.length / platformRtf;
    const platformPaced = await timed(async () => Buffer.from(await (await platformStream(replayer.platformUrl, `rtf=${platformRtf}`)).arrayBuffer()));
    expect(platformPaced.ms).toBeGreaterThanOrEqual(platformDue * 0.9);
    expect(whole.ms).toBeLessThan(platformDue);
    expect(platformPaced.bytes.equals(whole.bytes)).toBe(true);
  });

  it('--replay-speed 1 keeps the recorded pace; 0 sends at once', async () => {
    const name = readdirSync(dir).find((f) => f.startsWith('speech-post-v1-t2a-v2-') && JSON.parse(readFileSync(join(dir, f), 'utf8')).answer.stream)!;
    const lastMs = JSON.parse(readFileSync(join(dir, name), 'utf8')).answer.stream.steps.at(-1).t_ms as number;
    const paced = await startReplayer(dir, { replaySpeed: 1 });
    try {
      const started = performance.now();
      await t2a(paced.speechUrl, streamBody, { key: 'ci' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(lastMs - 5);
    } finally {
      await paced.close();
    }
  });

  it("verify finds replayed requests by their body, as it finds the emulator's own", async () => {
    await t2a(replayer.speechUrl, wavBody, { key: 'verify-key' });
    const ok = await replayer.control.verify({ request: { path: '/v1/t2a_v2', account: 'verify-key', body: { text: 'Listen to me.' }, code: 0 }, exactly: 1 });
    expect(ok).toMatchObject({ ok: true, count: 1 });
  });

  it("hear says replayed audio is not the emulator's own, and still measures its duration (a cut one is shorter)", async () => {
    const r = await t2a(replayer.speechUrl, wavBody, { key: 'ci' });
    const wav = Buffer.from(r.body.data.audio, 'hex');
    expect(wav.equals(recordedWav)).toBe(true);
    const heard = (await call(`${replayer.speechUrl}/_emulator/hear`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: wav })).body;
    expect(heard.own).toBe(false);
    expect(heard.note).toMatch(/no signature of this emulator/);
    const probe = await ffprobe(wav);
    expect(Math.abs(heard.duration_ms - probe.durationMs)).toBeLessThanOrEqual(2);
    expect(heard.utterances).toEqual([]);
    // The replayed platform stream cut by a fault: hear finds the cut at its end.
    const cut = await platformStream(replayer.platformUrl, 'cut_after_chunks=2');
    const parts: Buffer[] = [];
    try {
      for await (const c of cut.body as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(c));
    } catch {
      // The cut.
    }
    const partial = Buffer.concat(parts);
    const cutHeard = (await call(`${replayer.speechUrl}/_emulator/hear`, { method: 'POST', headers: { 'content-type': 'audio/mpeg' }, body: partial })).body;
    expect(cutHeard.own).toBe(false);
    // Cut short: hear measures what arrived, shorter than the whole replayed stream.
    const whole = Buffer.from(await (await platformStream(replayer.platformUrl)).arrayBuffer());
    const wholeHeard = (await call(`${replayer.speechUrl}/_emulator/hear`, { method: 'POST', headers: { 'content-type': 'audio/mpeg' }, body: whole })).body;
    expect(partial.length).toBeLessThan(whole.length);
    expect(cutHeard.duration_ms).toBeLessThan(wholeHeard.duration_ms);
  });
});
