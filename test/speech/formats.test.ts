// pcmu_raw, pcmu_wav and opus on HTTP (whole and streamed), the WebSocket and async (E12-E15).
import { describe, expect, it } from 'vitest';
import { readSignature } from '../../src/audio/index.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffmpegPcm16 } from '../helpers/ffprobe.js';
import { checkMulaw, checkOpus, ffmpegVerdict, oggPages } from '../helpers/ogg.js';
import { taskFiles } from './async/async-helpers.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { req, strictEvents, t2a } from './helpers.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const TEXT = 'Hello there.';
const KEY = 'speech-formats-key';

const audioOf = (r: { body: any }) => Buffer.from(r.body.data.audio, 'hex');

/** One request whole and the same request streamed (after a reset: the same seed, so the same Ogg serial). */
async function wholeAndStreamed(audio_setting: Record<string, unknown>, text = TEXT) {
  await ctl.reset();
  const whole = await t2a(emu.speechUrl, req({ audio_setting }, text), { key: KEY });
  expect(whole.body.base_resp).toEqual({ status_code: 0, status_msg: 'success' });
  await ctl.reset();
  const res = await t2a(emu.speechUrl, req({ audio_setting, stream: true }, text), { key: KEY });
  const events = strictEvents(res.text);
  const chunks = events.slice(0, -1).map((e) => Buffer.from(e.data.audio, 'hex'));
  const final = events.at(-1);
  expect(final.data.status).toBe(2);
  return { whole: audioOf(whole), extra: whole.body.extra_info, chunks, final };
}

describe('formats pcmu_raw, pcmu_wav, opus', () => {
  for (const rate of [8000, 16000, 24000])
    for (const channel of [1, 2])
      it(`HTTP opus ${rate} Hz x ${channel}: one Ogg stream per answer, streamed chunks on pages join to the whole file, extra_info true`, async () => {
        // mmx sends bitrate 128000 with every format: accepted, used only for mp3.
        const { whole, extra, chunks, final } = await wholeAndStreamed({ format: 'opus', sample_rate: rate, channel, bitrate: 128000 });
        expect(whole.toString('latin1', 0, 4)).toBe('OggS');
        expect(extra).toMatchObject({
          audio_format: 'opus',
          audio_sample_rate: rate,
          audio_channel: channel,
          bitrate: 32000 * channel,
          audio_size: whole.length,
        });
        await checkOpus(whole, { channels: channel, sampleRate: rate, audioLengthMs: extra.audio_length });
        expect(Buffer.concat(chunks).equals(whole)).toBe(true);
        expect(Buffer.from(final.data.audio, 'hex').equals(whole)).toBe(true);
        expect(final.extra_info).toEqual(extra);
        expect(oggPages(chunks[0]!).length).toBeGreaterThanOrEqual(3); // OpusHead, OpusTags and audio
        for (const c of chunks) expect(oggPages(c).length).toBeGreaterThan(0); // each chunk is whole pages
      });

  it('HTTP opus: 24000 when no rate is given; 22050, 32000, 44100, 12000, 48000 are 2013 with the Opus rule', async () => {
    const r = await t2a(emu.speechUrl, req({ audio_setting: { format: 'opus' } }), { key: KEY });
    expect(r.body.extra_info).toMatchObject({ audio_format: 'opus', audio_sample_rate: 24000 });
    await checkOpus(audioOf(r), { channels: 1, sampleRate: 24000, audioLengthMs: r.body.extra_info.audio_length });
    for (const rate of [22050, 32000, 44100, 12000, 48000]) {
      for (const stream of [false, true]) {
        const bad = await t2a(emu.speechUrl, req({ stream, audio_setting: { format: 'opus', sample_rate: rate } }), { key: KEY });
        expect([bad.status, bad.body.base_resp]).toEqual([
          200,
          { status_code: 2013, status_msg: `invalid params, audio_setting.sample_rate ${rate} is not supported for opus; use 8000, 16000 or 24000` },
        ]);
      }
    }
    // Opus's own 12000 is no rate of the general enum for the other formats.
    const mulaw = await t2a(emu.speechUrl, req({ audio_setting: { format: 'pcmu_raw', sample_rate: 12000 } }), { key: KEY });
    expect(mulaw.body.base_resp.status_msg).toBe('invalid params, audio_setting.sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100');
  });

  it("the journal's copy of an Opus answer is the answer byte for byte (made again with the same serial)", async () => {
    const r = await t2a(emu.speechUrl, req({ audio_setting: { format: 'opus', sample_rate: 16000 } }), { key: KEY });
    const entry = (await ctl.journal({ limit: 1, account: KEY })).body.entries[0];
    expect(entry.answer_audio).toMatchObject({ bytes: audioOf(r).length, format: 'opus', sample_rate: 16000, channels: 1 });
    const kept = Buffer.from(await (await fetch(emu.speechUrl + entry.answer_audio.url)).arrayBuffer());
    expect(kept.equals(audioOf(r))).toBe(true);
  });

  for (const format of ['pcmu_raw', 'pcmu_wav'] as const)
    for (const channel of [1, 2])
      it(`HTTP ${format} x ${channel}: 8000 Hz whatever rate was asked, G.711 decodable, streamed joins to the whole file`, async () => {
        const { whole, extra, chunks, final } = await wholeAndStreamed({ format, sample_rate: 32000, channel, bitrate: 128000 });
        expect(extra).toMatchObject({
          audio_format: format,
          audio_sample_rate: 8000,
          audio_channel: channel,
          bitrate: 64000 * channel,
          audio_size: whole.length,
        });
        await checkMulaw(whole, format === 'pcmu_raw' ? 'raw' : 'wav', channel, extra.audio_length);
        expect(Buffer.concat(chunks).equals(whole)).toBe(true); // a streamed μ-law WAV carries its true sizes from the first chunk
        expect(Buffer.from(final.data.audio, 'hex').equals(whole)).toBe(true);
        if (format === 'pcmu_wav') expect(chunks[0]!.toString('latin1', 0, 4)).toBe('RIFF');
      });

  it('voice_modify with opus or pcmu is accepted and ignored on HTTP; the signature is read back from both', async () => {
    const modify = { pitch: 50, timbre: -40, sound_effects: 'robotic' };
    for (const format of ['opus', 'pcmu_wav']) {
      await ctl.reset();
      const plain = await t2a(emu.speechUrl, req({ audio_setting: { format } }), { key: KEY });
      await ctl.reset();
      const modified = await t2a(emu.speechUrl, req({ audio_setting: { format }, voice_modify: modify }), { key: KEY });
      expect(modified.body.base_resp.status_code).toBe(0);
      expect(audioOf(modified).equals(audioOf(plain))).toBe(true);
      const pcm = await ffmpegPcm16(audioOf(plain), { ext: format === 'opus' ? 'ogg' : 'wav', rate: 16000 });
      const samples = Float32Array.from(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2), (v) => v / 32768);
      expect(readSignature(samples, 16000), format).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  for (const rate of [8000, 16000, 24000])
    for (const channel of [1, 2])
      it(`WebSocket opus ${rate} Hz x ${channel}: each piece is its own Ogg stream with a new serial`, async () => {
        const texts = rate === 24000 && channel === 2 ? ['First piece.', 'Second piece.'] : ['One piece.'];
        const r = await session(emu.speechUrl, [
          { ...START, audio_setting: { format: 'opus', sample_rate: rate, channel, bitrate: 128000 } },
          ...texts.map((text) => ({ event: 'task_continue', text })),
          { event: 'task_finish' },
        ]);
        expect(r.messages.at(-1).event).toBe('task_finished');
        const pieces = piecesOf(r.messages);
        expect(pieces).toHaveLength(texts.length);
        const serials: number[] = [];
        for (const p of pieces) {
          expect(p.extra).toMatchObject({
            audio_format: 'opus',
            audio_sample_rate: rate,
            audio_channel: channel,
            bitrate: 32000 * channel,
            audio_size: p.audio.length,
          });
          const pages = await checkOpus(p.audio, { channels: channel, sampleRate: rate, audioLengthMs: p.extra.audio_length });
          serials.push(pages[0]!.serial);
        }
        expect(new Set(serials).size).toBe(serials.length);
        // Every audio message is whole pages, the first of a piece with both headers and audio.
        const audio = r.messages.filter((m) => m.event === 'task_continued' && m.data?.audio);
        for (const m of audio) oggPages(Buffer.from(m.data.audio, 'hex'));
        expect(oggPages(Buffer.from(audio[0].data.audio, 'hex')).length).toBeGreaterThanOrEqual(3);
        // The pieces joined are a chained Ogg that ffmpeg decodes without a word.
        if (pieces.length > 1) expect(await ffmpegVerdict(Buffer.concat(pieces.map((p) => p.audio)), 'ogg')).toEqual({ code: 0, stderr: '' });
      });

  it('WebSocket: opus defaults to 24000 Hz; pcmu_raw and pcmu_wav in stereo', async () => {
    const r = await session(emu.speechUrl, [{ ...START, audio_setting: { format: 'opus' } }, { event: 'task_continue', text: TEXT }, { event: 'task_finish' }]);
    expect(piecesOf(r.messages)[0]!.extra).toMatchObject({ audio_format: 'opus', audio_sample_rate: 24000 });
    for (const format of ['pcmu_raw', 'pcmu_wav'] as const) {
      const m = await session(emu.speechUrl, [
        { ...START, audio_setting: { format, channel: 2, sample_rate: 44100 } },
        { event: 'task_continue', text: TEXT },
        { event: 'task_finish' },
      ]);
      const [p] = piecesOf(m.messages);
      expect(p!.extra).toMatchObject({ audio_format: format, audio_sample_rate: 8000, audio_channel: 2, bitrate: 128000, audio_size: p!.audio.length });
      await checkMulaw(p!.audio, format === 'pcmu_raw' ? 'raw' : 'wav', 2, p!.extra.audio_length);
    }
  });

  it('async: opus at each of its five rates in mono and stereo, μ-law files; other opus rates fail the task; voice_modify only with mp3/wav/flac', async () => {
    await ctl.reset();
    await ctl.freeze(true);
    const api = speechApi(emu.speechUrl, 'speech-formats-async');
    const create = (audio_setting: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: TEXT, voice_setting: { voice_id: 'female-shaonv' }, audio_setting, ...extra });
    const made: { c: any; rate: number; channel: number; format: string }[] = [];
    for (const rate of [8000, 12000, 16000, 24000, 48000])
      for (const channel of [1, 2]) made.push({ c: await create({ format: 'opus', audio_sample_rate: rate, channel }), rate, channel, format: 'opus' });
    made.push({ c: await create({ format: 'opus' }), rate: 24000, channel: 1, format: 'opus' });
    made.push({ c: await create({ format: 'pcmu_wav', audio_sample_rate: 24000, channel: 2 }), rate: 8000, channel: 2, format: 'pcmu_wav' });
    made.push({ c: await create({ format: 'pcmu_raw' }), rate: 8000, channel: 1, format: 'pcmu_raw' });
    for (const { c, rate, channel, format } of made) {
      expect(codeOf(c)).toBe(0);
      const files = await taskFiles(api, c.body.task_id, c.body.file_id);
      const ext = { opus: 'opus', pcmu_wav: 'wav', pcmu_raw: 'pcmu' }[format];
      const base = `${c.body.task_id}/content-${c.body.task_id}`;
      expect([...files.keys()]).toEqual([`${base}.${ext}`, `${base}.titles`, `${base}.extra`]);
      const audio = files.get(`${base}.${ext}`)!;
      const extra = JSON.parse(files.get(`${base}.extra`)!.toString());
      expect(extra).toMatchObject({ audio_sample_rate: rate, audio_size: audio.length, bitrate: (format === 'opus' ? 32000 : 64000) * channel });
      if (format === 'opus') await checkOpus(audio, { channels: channel, sampleRate: rate, audioLengthMs: extra.audio_length });
      else await checkMulaw(audio, format === 'pcmu_raw' ? 'raw' : 'wav', channel, extra.audio_length);
    }

    // Another opus rate: the task is created, then Failed.
    for (const rate of [32000, 22050, 11025]) {
      const c = await create({ format: 'opus', audio_sample_rate: rate });
      expect(codeOf(c)).toBe(0);
      const q = await api.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`);
      expect(q.body.status).toBe('Failed');
    }
    // The general enum still binds every other format, and voice_modify only mp3, wav and flac.
    const mp3 = await create({ format: 'mp3', audio_sample_rate: 48000 });
    expect(msgOf(mp3)).toBe('invalid params, audio_setting.audio_sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100');
    for (const format of ['opus', 'pcm', 'pcmu_raw']) {
      const bad = await create({ format }, { voice_modify: { pitch: 10 } });
      expect([codeOf(bad), msgOf(bad)]).toEqual([
        2013,
        `invalid params, voice_modify applies only to mp3, wav and flac; audio_setting.format ${format} does not take it`,
      ]);
    }
    expect(codeOf(await create({ format: 'wav' }, { voice_modify: { pitch: 10 } }))).toBe(0);
  });
});
