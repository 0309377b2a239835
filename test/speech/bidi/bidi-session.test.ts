import { describe, expect, it } from 'vitest';
import { decodeToMono, readSignature } from '../../../src/audio/index.js';
import { emulatorForFile } from '../../helpers/emulator.js';
import { checkMulaw, checkOpus, ffmpegVerdict, oggPages } from '../../helpers/ogg.js';
import { flacTest } from '../helpers.js';
import { ffprobe } from '../../helpers/ffprobe.js';
import { BIDI_START, bidiSession, sentencesOf } from './bidi-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

const text = (t: unknown) => ({ event: 'task_continue', text: t });
const finish = { event: 'task_finish' };
const withFormat = (audio_setting: Record<string, unknown>) => ({ ...BIDI_START, audio_setting });
const SENTENCES = ['Hello there, this is the first sentence.', 'And here comes a second one!', 'Finally the third?'];
/** The three sentences sent in pieces that cut across their boundaries. */
const PIECES = ['Hello there, this is the fi', 'rst sentence. And here', ' comes a second one! Finally the third?'];

describe('/ws/v1/t2a_v2_bidi: events in order (E5, E7)', () => {
  it('connected_success with connect_id, then task_started, sentence_start, task_continued…, is_final with extra_info, sentence_end per sentence, task_finished, close 1000', async () => {
    const r = await bidiSession(emu.speechUrl, [BIDI_START, ...PIECES.map(text), finish]);
    const [hello, started] = r.messages;
    expect(hello.event).toBe('connected_success');
    expect(hello.connect_id).toMatch(/^[1-9]\d{14}$/);
    expect(hello.session_id).toBe(hello.connect_id);
    expect(hello.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(hello.base_resp).toEqual({ status_code: 0, status_msg: 'success' });
    expect(started).toMatchObject({ event: 'task_started', trace_id: hello.trace_id, connect_id: hello.connect_id });
    for (const m of r.messages) {
      expect(Object.keys(m)).toEqual(expect.arrayContaining(['event', 'session_id', 'connect_id', 'trace_id', 'base_resp']));
      expect(m.connect_id).toBe(hello.connect_id);
      expect(m.session_id).toBe(hello.connect_id);
      expect(m.base_resp.status_code).toBe(0);
    }
    // The skeleton: per sentence start, audio…, end; never interleaved.
    const skeleton = r.messages
      .map((m) => (m.event === 'task_continued' ? (m.is_final ? 'final' : 'audio') : m.event))
      .filter((e, i, all) => !(e === 'audio' && all[i - 1] === 'audio'));
    expect(skeleton).toEqual([
      'connected_success',
      'task_started',
      ...SENTENCES.flatMap(() => ['sentence_start', 'audio', 'final', 'sentence_end']),
      'task_finished',
    ]);
    expect(r.close.code).toBe(1000);

    const sentences = sentencesOf(r.messages);
    expect(sentences).toHaveLength(3);
    // Control events on the connection's trace; each sentence its own fresh trace, shared by its messages.
    const traces = new Set(sentences.map((s) => s.trace));
    expect(traces.size).toBe(3);
    expect(traces.has(hello.trace_id)).toBe(false);
    for (const s of sentences) for (const c of s.chunks) expect(c.trace_id).toBe(s.trace);
    const ends = r.messages.filter((m) => m.event === 'sentence_end').map((m) => m.trace_id);
    expect(ends).toEqual(sentences.map((s) => s.trace));
    expect(r.messages.at(-1)).toMatchObject({ event: 'task_finished', trace_id: hello.trace_id });

    // One is_final per sentence, on its last chunk (never an aggregate), with extra_info true to the sentence's bytes.
    for (const [i, s] of sentences.entries()) {
      const finals = s.chunks.filter((c) => c.is_final);
      expect(finals).toHaveLength(1);
      expect(s.chunks.at(-1).is_final).toBe(true);
      for (const c of s.chunks.slice(0, -1)) expect(c.extra_info).toBeUndefined();
      expect(s.extra.audio_size).toBe(s.audio.length);
      expect(s.extra.audio_format).toBe('mp3');
      const probe = await ffprobe(s.audio, { ext: 'mp3' });
      expect(probe.codec).toBe('mp3');
      expect(probe.sampleRate).toBe(s.extra.audio_sample_rate);
      expect(probe.channels).toBe(s.extra.audio_channel);
      expect(Math.abs(probe.durationMs - s.extra.audio_length), `sentence ${i}`).toBeLessThan(60);
    }
    // Independent MP3 streams, and joined they still decode.
    const joined = await ffprobe(Buffer.concat(sentences.map((s) => s.audio)), { ext: 'mp3' });
    const sum = sentences.reduce((a, s) => a + s.extra.audio_length, 0);
    expect(Math.abs(joined.durationMs - sum)).toBeLessThan(150);
  });

  it('each sentence says its own text: the signature names it', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'pcm', sample_rate: 16000 }), ...PIECES.map(text), finish]);
    for (const [i, s] of sentencesOf(r.messages).entries()) {
      const decoded = await decodeToMono(s.audio, { rawPcm: { sampleRate: 16000, channels: 1 } });
      const id = readSignature(decoded.samples, decoded.sampleRate);
      expect(emu.emulator.signatures.get(id!)?.text).toBe(SENTENCES[i]);
    }
  });

  it('a client session_id is echoed from task_started on; connected_success carries the connect_id', async () => {
    const r = await bidiSession(emu.speechUrl, [{ ...BIDI_START, session_id: 'my-session-001' }, text('Hi there.'), finish]);
    const [hello, ...rest] = r.messages;
    expect(hello.session_id).toBe(hello.connect_id);
    for (const m of rest) expect(m).toMatchObject({ session_id: 'my-session-001', connect_id: hello.connect_id });
  });

  it('connect_ids are fresh per connection', async () => {
    const a = await bidiSession(emu.speechUrl, [BIDI_START, finish]);
    const b = await bidiSession(emu.speechUrl, [BIDI_START, finish]);
    expect(a.messages[0].connect_id).not.toBe(b.messages[0].connect_id);
    expect(a.messages.map((m) => m.event)).toEqual(['connected_success', 'task_started', 'task_finished']);
  });

  it('works the same on the backup listener', async () => {
    const r = await bidiSession(emu.speechBackupUrl, [withFormat({ format: 'pcm', sample_rate: 8000 }), text('Backup works.'), finish]);
    expect(r.messages.map((m) => m.event)).toEqual(expect.arrayContaining(['connected_success', 'sentence_end', 'task_finished']));
    expect(r.close.code).toBe(1000);
  });
});

describe('each sentence is an independent file of its format (E7)', () => {
  it('pcm: sample-true per sentence, and the sentences joined are one continuous stream', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'pcm', sample_rate: 16000 }), ...PIECES.map(text), finish]);
    const sentences = sentencesOf(r.messages);
    for (const s of sentences) {
      expect(s.extra.audio_size).toBe(s.audio.length);
      expect(s.extra.audio_length).toBe(Math.round((s.audio.length / 2 / 16000) * 1000));
    }
    const joined = Buffer.concat(sentences.map((s) => s.audio));
    const decoded = await decodeToMono(joined, { rawPcm: { sampleRate: 16000, channels: 1 } });
    expect(decoded.samples.length).toBe(joined.length / 2);
    const sum = sentences.reduce((a, s) => a + s.extra.audio_length, 0);
    expect(Math.abs((decoded.samples.length / 16000) * 1000 - sum)).toBeLessThanOrEqual(2);
  });

  it('flac: each sentence starts with its own header and passes flac -t', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'flac', sample_rate: 24000 }), text(SENTENCES[0]), text(SENTENCES[1]), finish]);
    const sentences = sentencesOf(r.messages);
    expect(sentences).toHaveLength(2);
    for (const s of sentences) {
      expect(s.audio.toString('latin1', 0, 4)).toBe('fLaC');
      await flacTest(s.audio);
      const probe = await ffprobe(s.audio, { ext: 'flac' });
      expect(probe.sampleRate).toBe(24000);
      expect(Math.abs(probe.durationMs - s.extra.audio_length)).toBeLessThan(2);
    }
  });

  it('pcmu_wav: a new μ-law WAV header per sentence', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'pcmu_wav' }), text(SENTENCES[0]), text(SENTENCES[1]), finish]);
    for (const s of sentencesOf(r.messages)) {
      expect(s.audio.toString('latin1', 0, 4)).toBe('RIFF');
      const probe = await ffprobe(s.audio, { ext: 'wav' });
      expect(probe.codec).toBe('pcm_mulaw');
      expect(s.extra).toMatchObject({ audio_format: 'pcmu_wav', audio_sample_rate: 8000, audio_size: s.audio.length });
      expect(Math.abs(probe.durationMs - s.extra.audio_length)).toBeLessThan(2);
    }
  });

  it('opus: each sentence is a new Ogg stream with its own serial; the sentences joined are a chained Ogg ffmpeg decodes', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'opus', sample_rate: 16000 }), text(SENTENCES[0]), text(SENTENCES[1]), finish]);
    const sentences = sentencesOf(r.messages);
    expect(sentences).toHaveLength(2);
    const serials = [];
    for (const s of sentences) {
      expect(s.extra).toMatchObject({ audio_format: 'opus', audio_sample_rate: 16000, audio_size: s.audio.length });
      const pages = await checkOpus(s.audio, { channels: 1, sampleRate: 16000, audioLengthMs: s.extra.audio_length });
      serials.push(pages[0]!.serial);
    }
    expect(serials[0]).not.toBe(serials[1]);
    expect(await ffmpegVerdict(Buffer.concat(sentences.map((s) => s.audio)), 'ogg')).toEqual({ code: 0, stderr: '' });
    expect(oggPages(Buffer.concat(sentences.map((s) => s.audio))).length).toBe(sentences.reduce((n, s) => n + oggPages(s.audio).length, 0));
  });

  it('pcmu_raw: μ-law at 8 kHz per sentence, and the sentences joined decode as one stream', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'pcmu_raw' }), text(SENTENCES[0]), text(SENTENCES[1]), finish]);
    const sentences = sentencesOf(r.messages);
    for (const s of sentences) await checkMulaw(s.audio, 'raw', 1, s.extra.audio_length);
    const joined = Buffer.concat(sentences.map((s) => s.audio));
    expect(await ffmpegVerdict(joined, 'raw', ['-f', 'mulaw', '-ar', '8000', '-ac', '1'])).toEqual({ code: 0, stderr: '' });
  });

  it('wav is refused at task_start as on /ws/v1/t2a_v2 (2013, close 1000)', async () => {
    const r = await bidiSession(emu.speechUrl, [withFormat({ format: 'wav' }), text('Hi.')]);
    expect(r.messages.map((m) => m.event)).toEqual(['connected_success', 'task_failed']);
    expect(r.messages[1].base_resp.status_msg).toMatch(/^invalid params, audio_setting\.format wav is supported only in non-streaming output/);
    expect(r.close.code).toBe(1000);
  });
});

describe('subtitles per sentence (E7)', () => {
  it('offsets are relative to the sentence text and times to its start; never on is_final', async () => {
    const r = await bidiSession(emu.speechUrl, [{ ...withFormat({ format: 'pcm', sample_rate: 8000 }), subtitle_enable: true }, ...PIECES.map(text), finish]);
    const sentences = sentencesOf(r.messages);
    expect(sentences).toHaveLength(3);
    for (const [i, s] of sentences.entries()) {
      const subs = s.chunks.filter((c) => c.data.subtitle).map((c) => c.data.subtitle);
      expect(subs).toEqual([expect.objectContaining({ text: SENTENCES[i], text_begin: 0, text_end: [...SENTENCES[i]!].length })]);
      // The sentence's own time line (a short lead-in), not the session's.
      expect(subs[0].time_begin).toBeLessThan(1000);
      expect(subs[0].time_end).toBeLessThanOrEqual(s.extra.audio_length);
      expect(s.chunks.at(-1).data.subtitle).toBeUndefined();
    }
  });
});

describe('billing per sentence', () => {
  it('each sentence is charged as an HTTP request of its text', async () => {
    const key = 'speech-bidi-billing';
    await ctl.putAccount(key, { balance_micro: 1_000_000 });
    const r = await bidiSession(emu.speechUrl, [BIDI_START, ...PIECES.map(text), finish], { key });
    const used = sentencesOf(r.messages).reduce((a, s) => a + s.extra.usage_characters, 0);
    expect(used).toBeGreaterThan(0);
    expect((await ctl.account(key)).body.balance_micro).toBe(1_000_000 - used * 100);
    const view = await ctl.accountState(key);
    expect(view.resources.speech).toMatchObject({ requests: 3, usage_characters: used });
  });
});
