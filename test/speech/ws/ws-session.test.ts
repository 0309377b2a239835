import { describe, expect, it } from 'vitest';
import { decodeToMono, readSignature } from '../../../src/audio/index.js';
import { emulatorForFile } from '../../helpers/emulator.js';
import { ffprobe as probe } from '../../helpers/ffprobe.js';
import { flacTest } from '../helpers.js';
import { ffprobe } from '../../helpers/ffprobe.js';
import { piecesOf, session, START } from './ws-helpers.js';

const { emu } = emulatorForFile({ plane: 'speech' });

const SENTENCES = ['Hello there, this is the first sentence.', 'And here comes a second one.', 'Finally the third.'];
const frames = (audio_setting: Record<string, unknown> = {}, texts = SENTENCES, extra: Record<string, unknown> = {}) => [
  { ...START, ...extra, audio_setting },
  ...texts.map((text) => ({ event: 'task_continue', text })),
  { event: 'task_finish' },
];

/** ffprobe of raw μ-law bytes (no container), as a telephony client reads them. */
async function probeMulaw(bytes: Buffer): Promise<number> {
  return (await probe(bytes, { ext: 'raw', inputArgs: ['-f', 'mulaw', '-ar', '8000', '-ac', '1'] })).durationMs;
}

describe('/ws/v1/t2a_v2 session', () => {
  it('connected_success first, task_start sent at once, one final per piece with extra_info true to its bytes, task_finished then close 1000', async () => {
    const r = await session(emu.speechUrl, frames());
    const [first, started] = r.messages;
    expect(first.event).toBe('connected_success');
    expect(first.session_id).toMatch(/^\d{15}$/);
    expect(first.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(first.base_resp).toEqual({ status_code: 0, status_msg: 'success' });
    expect(started.event).toBe('task_started');
    for (const m of r.messages) expect(m.session_id).toBe(first.session_id);
    expect(r.messages.at(-1).event).toBe('task_finished');
    expect(r.close.code).toBe(1000);

    const finals = r.messages.filter((m) => m.is_final);
    expect(finals).toHaveLength(3);
    for (const f of finals) expect(f.data.audio.length).toBeGreaterThan(0); // the last chunk, never an aggregate
    const pieces = piecesOf(r.messages);
    expect(pieces).toHaveLength(3);
    for (const [i, p] of pieces.entries()) {
      expect(p.chunks).toBeGreaterThan(1);
      expect(p.extra.audio_size).toBe(p.audio.length);
      expect(p.extra.audio_format).toBe('mp3');
      const probe = await ffprobe(p.audio, { ext: 'mp3' });
      expect(probe.sampleRate).toBe(p.extra.audio_sample_rate);
      expect(Math.abs(probe.durationMs - p.extra.audio_length), `piece ${i}`).toBeLessThan(60);
    }
    // Intermediate chunks carry no extra_info; each starts on an MP3 frame sync.
    for (const m of r.messages.filter((x) => x.event === 'task_continued' && !x.is_final)) {
      expect(m.extra_info).toBeUndefined();
      expect(m.data.audio.slice(0, 3)).toMatch(/^fff/);
    }
    // The whole session decodes as one MP3 stream.
    const whole = await ffprobe(Buffer.concat(pieces.map((p) => p.audio)), { ext: 'mp3' });
    const sum = pieces.reduce((a, p) => a + p.extra.audio_length, 0);
    expect(Math.abs(whole.durationMs - sum)).toBeLessThan(100);
  });

  it('works the same on the backup listener', async () => {
    const r = await session(emu.speechBackupUrl, frames({ format: 'pcm', sample_rate: 8000 }, ['Backup works.']));
    expect(r.messages.map((m) => m.event)).toEqual(expect.arrayContaining(['connected_success', 'task_started', 'task_finished']));
    expect(r.close.code).toBe(1000);
  });

  it('pcm: every piece and the whole session are sample-true', async () => {
    const r = await session(emu.speechUrl, frames({ format: 'pcm', sample_rate: 16000 }));
    const pieces = piecesOf(r.messages);
    for (const p of pieces) {
      expect(p.audio.length % 2).toBe(0);
      expect(p.extra.audio_size).toBe(p.audio.length);
      expect(p.extra.audio_length).toBe(Math.round((p.audio.length / 2 / 16000) * 1000));
      for (const m of r.messages.filter((x) => x.data?.audio)) expect(m.data.audio.length % 4).toBe(0);
    }
  });

  it('each piece carries the signature of what it says', async () => {
    const r = await session(emu.speechUrl, frames({ format: 'pcm', sample_rate: 16000 }));
    for (const [i, p] of piecesOf(r.messages).entries()) {
      const decoded = await decodeToMono(p.audio, { rawPcm: { sampleRate: 16000, channels: 1 } });
      const id = readSignature(decoded.samples, decoded.sampleRate);
      expect(id, `piece ${i}`).toBeTruthy();
      expect(emu.emulator.signatures.get(id!)?.text).toBe(SENTENCES[i]);
    }
  });

  it('flac: each piece is one valid file whose STREAMINFO holds its true length', async () => {
    const r = await session(emu.speechUrl, frames({ format: 'flac', sample_rate: 24000 }, SENTENCES.slice(0, 2)));
    for (const p of piecesOf(r.messages)) {
      await flacTest(p.audio);
      expect(p.extra.audio_format).toBe('flac');
      expect(p.extra.audio_size).toBe(p.audio.length);
      const probe = await ffprobe(p.audio, { ext: 'flac' });
      expect(probe.sampleRate).toBe(24000);
      expect(Math.abs(probe.durationMs - p.extra.audio_length)).toBeLessThan(2);
    }
  });

  it('pcmu_raw and pcmu_wav are G.711 μ-law at 8 kHz', async () => {
    const raw = piecesOf((await session(emu.speechUrl, frames({ format: 'pcmu_raw', sample_rate: 32000 }, SENTENCES.slice(0, 2)))).messages);
    for (const p of raw) {
      expect(p.extra).toMatchObject({ audio_format: 'pcmu_raw', audio_sample_rate: 8000, audio_size: p.audio.length, bitrate: 64000 });
      expect(p.extra.audio_length).toBe(Math.round(p.audio.length / 8));
      expect(Math.abs((await probeMulaw(p.audio)) - p.extra.audio_length)).toBeLessThan(2);
    }
    const wav = piecesOf((await session(emu.speechUrl, frames({ format: 'pcmu_wav' }, SENTENCES.slice(0, 2)))).messages);
    for (const p of wav) {
      expect(p.audio.toString('latin1', 0, 4)).toBe('RIFF');
      expect(p.extra).toMatchObject({ audio_format: 'pcmu_wav', audio_sample_rate: 8000, audio_size: p.audio.length });
      const probe = await ffprobe(p.audio, { ext: 'wav' });
      expect(probe.codec).toBe('pcm_mulaw');
      expect(probe.sampleRate).toBe(8000);
      expect(Math.abs(probe.durationMs - p.extra.audio_length)).toBeLessThan(2);
    }
  });

  it('wav, and opus at a rate Opus does not take, are 2013 naming the reason, then close 1000', async () => {
    const wav = await session(emu.speechUrl, frames({ format: 'wav' }));
    expect(wav.messages.at(-1)).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2013 } });
    expect(wav.messages.at(-1).base_resp.status_msg).toMatch(/^invalid params, audio_setting\.format wav is supported only in non-streaming output/);
    expect(wav.close.code).toBe(1000);
    const opus = await session(emu.speechUrl, frames({ format: 'opus', sample_rate: 32000 }));
    expect(opus.messages.at(-1).base_resp.status_msg).toBe(
      'invalid params, audio_setting.sample_rate 32000 is not supported for opus; use 8000, 16000 or 24000',
    );
    expect(opus.close.code).toBe(1000);
    const other = await session(emu.speechUrl, frames({ format: 'ogg' }));
    expect(other.messages.at(-1).base_resp.status_msg).toBe(
      'invalid params, audio_setting.format must be one of mp3, pcm, flac, wav, pcmu_raw, pcmu_wav, opus',
    );
  });

  it("english_normalization (and livekit's top-level text_normalization) read digits as words", async () => {
    const len = async (extra: Record<string, unknown>, vs: Record<string, unknown> = {}) => {
      const r = await session(emu.speechUrl, [
        { ...START, ...extra, voice_setting: { ...START.voice_setting, ...vs }, audio_setting: { format: 'pcm', sample_rate: 8000 } },
        { event: 'task_continue', text: 'Room 1234567.' },
        { event: 'task_finish' },
      ]);
      return piecesOf(r.messages)[0]!.audio.length;
    };
    const plain = await len({});
    expect(await len({}, { english_normalization: true })).toBeGreaterThan(plain);
    expect(await len({ text_normalization: true })).toBe(await len({}, { english_normalization: true }));
  });
});
