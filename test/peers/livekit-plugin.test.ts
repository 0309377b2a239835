/**
 * Peer: LiveKit Agents' MiniMax TTS plugin (`@livekit/agents-plugin-minimax` 1.6.1 with
 * `@livekit/agents` 1.6.1), unmodified, outside any room, pointed at the speech listener by its
 * `baseUrl` option (or `MINIMAX_BASE_URL`) alone. What it sends, read from its source: `synthesize()`
 * is a streamed `POST /v1/t2a_v2` with pcm, `stream_options.exclude_aggregated_audio` and
 * `text_normalization: false`, read line by line (only `data:` lines count); `stream()` opens
 * `/ws/v1/t2a_v2`, sends task_start before reading connected_success, one task_continue per sentence
 * of its tokenizer, then task_finish, and takes the segment id from task_started's `session_id`.
 * Errors reach the application as the TTS `error` event. The frames it yields must add up, sample
 * for sample, to the audio the emulator reported for the same request.
 * The plugin's other listed voices need the published catalogue: livekit-plugin-current.test.ts.
 */
import { TTS } from '@livekit/agents-plugin-minimax';
import type { TTSEmotion } from '@livekit/agents-plugin-minimax';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { collect, initLogger, pluginStart, replaySession, reportedWhole, sentencesOf, type Frames } from './livekit-plugin.js';

const KEY = 'livekit-plugin-peer-key';
const TEXT = 'Hello from the agent. How are you today?';
const { emu, ctl } = emulatorForFile({ plane: 'speech' });

beforeAll(() => initLogger());

const plugin = (opts: ConstructorParameters<typeof TTS>[0] = {}) => new TTS({ apiKey: KEY, baseUrl: emu.speechUrl, ...opts });

/** synthesize() once; its frames, the body it sent and what the emulator reports for that body. */
async function synthesized(opts: ConstructorParameters<typeof TTS>[0] = {}, text = TEXT) {
  const frames = await collect(plugin(opts).synthesize(text));
  const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
  const reported = await reportedWhole(emu.speechUrl, KEY, entry.request.body);
  return { frames, entry, body: entry.request.body, reported };
}

/** The frames are the reported audio: same rate, one channel, the same samples, one final frame at the end. */
function expectFramesAre(frames: Frames, reported: { audio: Buffer; extra: any }, rate: number) {
  expect(frames.sampleRates).toEqual([rate]);
  expect(frames.channels).toEqual([1]);
  expect(frames.finals).toEqual([frames.frames - 1]);
  expect(frames.samples * 2).toBe(reported.audio.length);
  expect(frames.pcm.equals(reported.audio)).toBe(true);
  expect(reported.extra).toMatchObject({ audio_sample_rate: rate, audio_size: reported.audio.length, audio_channel: 1 });
  expect(Math.abs((frames.samples / rate) * 1000 - reported.extra.audio_length)).toBeLessThanOrEqual(1);
}

describe('synthesize() against the speech listener', () => {
  it('defaults: the documented body, and frames that are the reported audio sample for sample', async () => {
    const { frames, entry, body, reported } = await synthesized();
    expect(body).toEqual({
      model: 'speech-02-turbo',
      voice_setting: { voice_id: 'socialmedia_female_2_v1', speed: 1, vol: 1, pitch: 0 },
      audio_setting: { sample_rate: 24000, bitrate: 128000, format: 'pcm', channel: 1 },
      text_normalization: false,
      text: TEXT,
      stream: true,
      stream_options: { exclude_aggregated_audio: true },
    });
    expect(entry.response.content_type).toContain('text/event-stream');
    expectFramesAre(frames, reported, 24000);
    // The plugin labels the frames with the Trace-Id header of the answer.
    expect(frames.requestIds).toEqual([entry.response.summary.trace_id]);
    const p = await ffprobe(frames.pcm, { inputArgs: ['-f', 's16le', '-ar', '24000', '-ac', '1'] });
    expect(Math.abs(p.durationMs - reported.extra.audio_length)).toBeLessThanOrEqual(1);
  });

  it('found through MINIMAX_API_KEY and MINIMAX_BASE_URL alone', async () => {
    process.env.MINIMAX_API_KEY = KEY;
    process.env.MINIMAX_BASE_URL = emu.speechUrl;
    try {
      const frames = await collect(new TTS().synthesize('Configured by the environment.'));
      const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
      expect(entry.request.headers.authorization).toMatch(/^Bearer /);
      expectFramesAre(frames, await reportedWhole(emu.speechUrl, KEY, entry.request.body), 24000);
    } finally {
      delete process.env.MINIMAX_API_KEY;
      delete process.env.MINIMAX_BASE_URL;
    }
  });

  it('every sample rate it offers: the frames come at that rate and hold the reported samples', async () => {
    for (const sampleRate of [8000, 16000, 22050, 24000, 32000, 44100] as const) {
      const { frames, body, reported } = await synthesized({ sampleRate }, 'A short rate check.');
      expect(body.audio_setting).toMatchObject({ sample_rate: sampleRate, format: 'pcm' });
      expectFramesAre(frames, reported, sampleRate);
    }
  });

  it('every model the emulator knows, sent as given', async () => {
    for (const model of [
      'speech-2.8-hd',
      'speech-2.8-turbo',
      'speech-2.6-hd',
      'speech-2.6-turbo',
      'speech-02-hd',
      'speech-02-turbo',
      'speech-01-hd',
      'speech-01-turbo',
    ]) {
      const { frames, body, reported } = await synthesized({ model }, 'A short model check.');
      expect(body.model).toBe(model);
      expectFramesAre(frames, reported, 24000);
    }
  });

  it('emotions, fluent with a 2.6 model; speeds 0.5 and 2.0 change the length as the emulator reports it', async () => {
    for (const emotion of ['happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'] as const) {
      const { frames, body, reported } = await synthesized({ emotion }, 'A short emotion check.');
      expect(body.voice_setting.emotion).toBe(emotion);
      expectFramesAre(frames, reported, 24000);
    }
    const fluent = await synthesized({ model: 'speech-2.6-hd', emotion: 'fluent' }, 'A short emotion check.');
    expectFramesAre(fluent.frames, fluent.reported, 24000);

    const slow = await synthesized({ speed: 0.5 }, 'The same words at two speeds.');
    const fast = await synthesized({ speed: 2 }, 'The same words at two speeds.');
    expect(slow.body.voice_setting.speed).toBe(0.5);
    expectFramesAre(slow.frames, slow.reported, 24000);
    expectFramesAre(fast.frames, fast.reported, 24000);
    expect(slow.frames.samples).toBeGreaterThan(fast.frames.samples * 2);
  });

  it('volume, pitch, language boost, text normalization and a pronunciation dictionary are sent and spoken', async () => {
    const opts: ConstructorParameters<typeof TTS>[0] = {
      vol: 2,
      pitch: -3,
      languageBoost: 'English',
      textNormalization: true,
      pronunciationDict: { tone: ['omg/oh my god'] },
    };
    const { frames, body, reported } = await synthesized(opts, 'omg, it works.');
    expect(body).toMatchObject({
      voice_setting: { vol: 2, pitch: -3 },
      language_boost: 'English',
      text_normalization: true,
      pronunciation_dict: { tone: ['omg/oh my god'] },
    });
    expectFramesAre(frames, reported, 24000);
    const plain = await synthesized({}, 'omg, it works.');
    expect(frames.samples).toBeGreaterThan(plain.frames.samples);
  });

  it('intensity and timbre go as voice_modify with pcm, which is accepted (addendum A2)', async () => {
    const { frames, body, reported } = await synthesized({ intensity: 40, timbre: -20 }, 'A modified voice.');
    expect(body.voice_modify).toEqual({ intensity: 40, timbre: -20 });
    expectFramesAre(frames, reported, 24000);
  });
});

describe('stream() against the speech listener', () => {
  async function streamed(parts: string[], opts: ConstructorParameters<typeof TTS>[0] = {}) {
    const tts = plugin(opts);
    const errors: Error[] = [];
    tts.on('error', (e) => errors.push(e.error));
    const s = tts.stream();
    for (const p of parts) s.pushText(p);
    s.flush();
    s.endInput();
    const frames = await collect(s);
    s.close();
    return { frames, errors };
  }

  it('defaults: one session whose frames are the audio the emulator sent for the same sentences', async () => {
    const parts = ['Hello from the stream. ', 'It has a second sentence, ', 'and a third one!'];
    const { frames, errors } = await streamed(parts);
    expect(errors).toEqual([]);
    const entry = await ctl.lastEntry({ path: '/ws/v1/t2a_v2' });
    expect(entry.status).toBe(101);
    const events = (entry.ws_frames as { dir: string; event: string }[]).filter((f) => f.dir === 'in').map((f) => f.event);
    const sentences = await sentencesOf(parts);
    expect(events).toEqual(['task_start', ...sentences.map(() => 'task_continue'), 'task_finish']);

    const replay = await replaySession(emu.speechUrl, KEY, pluginStart(), sentences);
    expect(frames.sampleRates).toEqual([24000]);
    expect(frames.finals).toEqual([frames.frames - 1]);
    expect(frames.pcm.equals(replay.audio)).toBe(true);
    const reportedMs = replay.extras.reduce((ms, x) => ms + x.audio_length, 0);
    expect(Math.abs((frames.samples / 24000) * 1000 - reportedMs)).toBeLessThanOrEqual(replay.extras.length);
  });

  it('another model, voice setting and rate', async () => {
    const opts = { model: 'speech-2.8-hd', speed: 1.5, emotion: 'happy', sampleRate: 16000 } as const;
    const parts = ['A faster, happier stream at sixteen kilohertz.'];
    const { frames, errors } = await streamed(parts, opts);
    expect(errors).toEqual([]);
    const replay = await replaySession(emu.speechUrl, KEY, pluginStart(opts), await sentencesOf(parts));
    expect(frames.sampleRates).toEqual([16000]);
    expect(frames.pcm.equals(replay.audio)).toBe(true);
  });

  /** An emotion the plugin's types do not offer (an application in JavaScript can still pass it): the emulator refuses it. */
  const WHISPER = 'whisper' as TTSEmotion;

  it('the legacy emotion neutral, which the plugin offers, streams the audio calm gets', async () => {
    const parts = ['A neutral delivery, as the plugin offers it.'];
    const { frames, errors } = await streamed(parts, { emotion: 'neutral' });
    expect(errors).toEqual([]);
    const replay = await replaySession(emu.speechUrl, KEY, pluginStart({ emotion: 'calm' }), await sentencesOf(parts));
    expect(frames.pcm.equals(replay.audio)).toBe(true);
  });

  it('a refusal reaches the application as an error event with the code and the message (whisper is not an emotion of this model)', async () => {
    const { frames, errors } = await streamed(['Hello there.'], { emotion: WHISPER });
    expect(frames.frames).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ statusCode: 2013, retryable: false });
    expect(errors[0]!.message).toContain('voice_setting.emotion whisper');
  });

  it('a model the emulator refuses (speech-2.5-hd-preview) is an error event naming the model', async () => {
    const { errors } = await streamed(['Hello there.'], { model: 'speech-2.5-hd-preview' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ statusCode: 2013 });
    expect(errors[0]!.message).toContain('speech-2.5-hd-preview');
  });
});

describe('what the plugin checks itself', () => {
  it('fluent with a model other than 2.6 is refused at construction, before any request', () => {
    expect(() => plugin({ emotion: 'fluent' })).toThrow(/only supported by speech-2.6/);
  });

  it('synthesize() with refused settings yields no audio: the plugin reads only data: lines, and the refusal is one JSON body', async () => {
    const frames = await collect(plugin({ emotion: 'whisper' as TTSEmotion }).synthesize('Hello there.'));
    expect(frames.frames).toBe(0);
    const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
    expect(entry.response.content_type).toMatch(/^application\/json/);
  });
});
