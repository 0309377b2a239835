import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { bidiSession, sentencesOf } from './bidi/bidi-helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { t2a } from './helpers.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

/**
 * `emotion: "neutral"`: a legacy value the service still takes (clients default to it); the
 * emulator renders it as `calm`. `auto` stays refused.
 */
const { emu } = emulatorForFile({ plane: 'speech', resetEach: true });

/** hermes-agent's MiniMax provider, as it posts to /v1/t2a_v2 with its defaults. */
const hermes = (emotion: string) => ({
  model: 'speech-02-hd',
  text: 'Hello from the agent.',
  voice_setting: { voice_id: 'English_expressive_narrator', speed: 1.0, vol: 1.0, pitch: 0, emotion },
  audio_setting: { sample_rate: 32000, bitrate: 128000, format: 'mp3', channel: 1 },
});

describe('emotion "neutral", a legacy value', () => {
  it("HTTP: hermes-agent's request is answered with audio, the same audio as calm's", async () => {
    const neutral = await t2a(emu.speechUrl, hermes('neutral'));
    expect([neutral.status, neutral.body.base_resp]).toEqual([200, { status_code: 0, status_msg: 'success' }]);
    const audio = Buffer.from(neutral.body.data.audio, 'hex');
    const probe = await ffprobe(audio, { ext: 'mp3' });
    expect([probe.codec, probe.sampleRate, probe.channels]).toEqual(['mp3', 32000, 1]);
    expect(probe.durationMs).toBeGreaterThan(500);
    const calm = await t2a(emu.speechUrl, hermes('calm'));
    expect(Buffer.from(calm.body.data.audio, 'hex').equals(audio)).toBe(true);
    const happy = await t2a(emu.speechUrl, hermes('happy'));
    expect(Buffer.from(happy.body.data.audio, 'hex').equals(audio)).toBe(false);
  });

  it('"neutral" is taken by every model of the catalogue; "auto" stays refused with the accepted values', async () => {
    for (const model of ['speech-2.8-hd', 'speech-2.6-turbo', 'speech-02-turbo', 'speech-01-hd']) {
      const r = await t2a(emu.speechUrl, { ...hermes('neutral'), model });
      expect(codeOf(r), model).toBe(0);
    }
    const auto = await t2a(emu.speechUrl, hermes('auto'));
    expect(codeOf(auto)).toBe(2013);
    expect(msgOf(auto)).toBe(
      'invalid params, voice_setting.emotion auto is not supported by speech-02-hd; it accepts happy, sad, angry, fearful, disgusted, surprised, calm',
    );
  });

  it('WebSocket: a task_start with emotion neutral (as LiveKit sends it) synthesizes; auto is task_failed 2013', async () => {
    const start = { ...START, voice_setting: { voice_id: 'male-qn-qingse', emotion: 'neutral' }, audio_setting: { format: 'pcm', sample_rate: 16000 } };
    const ok = await session(emu.speechUrl, [start, { event: 'task_continue', text: 'Hello there.' }, { event: 'task_finish' }]);
    expect(ok.messages.map((m) => m.event)).toContain('task_finished');
    expect(piecesOf(ok.messages)[0]!.audio.length).toBeGreaterThan(1000);
    const bad = await session(emu.speechUrl, [{ ...start, voice_setting: { voice_id: 'male-qn-qingse', emotion: 'auto' } }]);
    const failed = bad.messages.find((m) => m.event === 'task_failed');
    expect(failed?.base_resp.status_code).toBe(2013);
  });

  it('bidirectional socket and async synthesis take it too', async () => {
    const start = { ...START, voice_setting: { voice_id: 'male-qn-qingse', emotion: 'neutral' } };
    const bidi = await bidiSession(emu.speechUrl, [start, { event: 'task_continue', text: 'Hello there. ' }, { event: 'task_finish' }]);
    expect(bidi.messages.map((m) => m.event)).toContain('task_finished');
    expect(sentencesOf(bidi.messages)[0]!.audio.length).toBeGreaterThan(0);
    const api = speechApi(emu.speechUrl, 'legacy-emotion');
    const task = await api.post('/v1/t2a_async_v2', {
      model: 'speech-02-hd',
      text: 'Hello there.',
      voice_setting: { voice_id: 'female-shaonv', emotion: 'neutral' },
    });
    expect([task.status, codeOf(task)]).toEqual([200, 0]);
  });
});
