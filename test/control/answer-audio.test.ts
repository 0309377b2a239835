import { describe, expect, it } from 'vitest';
import { call, control, emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';

/** The audio an answer carried as hex, kept by the journal so a person can listen to it. */
const { emu } = emulatorForFile({ plane: 'speech' });
const T2A = '/v1/t2a_v2';
const TEXT = 'The inspector plays what the answer said.';

async function t2a(key: string, extra: Record<string, unknown>) {
  return call(`${emu.speechUrl}${T2A}`, {
    json: { model: 'speech-02-turbo', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' }, ...extra },
    headers: { authorization: `Bearer ${key}` },
  });
}

const lastEntry = (key: string) => control(emu.speechUrl).lastEntry({ account: key });

async function download(url: string) {
  const r = await fetch(emu.speechUrl + url);
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
}

describe('audio of an answer, in the journal', () => {
  it('a hex MP3 answer is kept byte for byte and decodes to the duration the answer claims', async () => {
    const r = await t2a('answer-mp3', { audio_setting: { format: 'mp3', sample_rate: 32000 } });
    expect(r.body.base_resp.status_code).toBe(0);
    const entry = await lastEntry('answer-mp3');
    expect(entry.answer_audio).toEqual({
      bytes: r.body.data.audio.length / 2,
      format: 'mp3',
      sample_rate: 32000,
      channels: 1,
      url: `/_emulator/journal/${entry.id}/answer-audio`,
    });
    const got = await download(entry.answer_audio.url);
    expect([got.status, got.type]).toEqual([200, 'audio/mpeg']);
    expect(got.bytes.equals(Buffer.from(r.body.data.audio, 'hex'))).toBe(true);
    const probe = await ffprobe(got.bytes, { ext: 'mp3' });
    expect(probe.codec).toBe('mp3');
    expect(Math.abs(probe.durationMs - r.body.extra_info.audio_length)).toBeLessThan(60);
  });

  it('raw PCM is served as the WAV of the same samples; a streamed answer keeps its aggregated audio', async () => {
    const r = await t2a('answer-pcm', { audio_setting: { format: 'pcm', sample_rate: 16000 } });
    const pcm = Buffer.from(r.body.data.audio, 'hex');
    const entry = await lastEntry('answer-pcm');
    const got = await download(entry.answer_audio.url);
    expect(got.type).toBe('audio/wav');
    expect(got.bytes.subarray(44).equals(pcm)).toBe(true);
    const probe = await ffprobe(got.bytes, { ext: 'wav' });
    expect([probe.sampleRate, probe.channels]).toEqual([16000, 1]);

    const s = await fetch(`${emu.speechUrl}${T2A}`, {
      method: 'POST',
      headers: { authorization: 'Bearer answer-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'speech-02-turbo', text: TEXT, stream: true, voice_setting: { voice_id: 'male-qn-qingse' } }),
    });
    const events = (await s.text()).split('\n\n').filter((e) => e.startsWith('data:'));
    const last = JSON.parse(events.at(-1)!.slice(5));
    const streamed = await lastEntry('answer-stream');
    expect(streamed.answer_audio.format).toBe('mp3');
    expect((await download(streamed.answer_audio.url)).bytes.equals(Buffer.from(last.data.audio, 'hex'))).toBe(true);
  });

  it('an answer that hands out a link keeps nothing; an entry without audio answers 404 in the control shape', async () => {
    await t2a('answer-url', { output_format: 'url' });
    const entry = await lastEntry('answer-url');
    expect(entry.answer_audio).toBeUndefined();
    const r = await call(`${emu.speechUrl}${entry.answer_audio?.url ?? `/_emulator/journal/${entry.id}/answer-audio`}`);
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/holds no answer audio/);
    // Cleared with the journal.
    await t2a('answer-clear', {});
    const kept = await lastEntry('answer-clear');
    await control(emu.speechUrl).clearJournal();
    expect((await call(`${emu.speechUrl}${kept.answer_audio.url}`)).status).toBe(404);
  });

  it('the audio is made again from its request when asked: a voice no longer there answers 404 saying so', async () => {
    const key = 'answer-voice-gone';
    const r = await t2a(key, { voice_setting: { voice_id: 'male-qn-jingying' } });
    expect(r.body.base_resp.status_code).toBe(0);
    const entry = await lastEntry(key);
    expect((await download(entry.answer_audio.url)).bytes.equals(Buffer.from(r.body.data.audio, 'hex'))).toBe(true);
    // The voice leaves the catalogue (a fixture set at run time).
    const ctl = control(emu.speechUrl);
    const voices = (await ctl.call('GET', '/fixtures/speech-voices.json')).body.content as { voice_id: string }[];
    expect(
      (
        await ctl.call(
          'PUT',
          '/fixtures/speech-voices.json',
          voices.filter((v) => v.voice_id !== 'male-qn-jingying'),
        )
      ).status,
    ).toBe(200);
    const gone = await call(`${emu.speechUrl}${entry.answer_audio.url}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toMatch(/cannot be made again: voice id not exist/);
    await ctl.call('PUT', '/fixtures/speech-voices.json', voices);
  });
});
