/**
 * Async synthesis caps per task and the tar built on disk (issue item 8): a tiny zip cannot ask for
 * more files, more audio or a larger output than a task may make (2013 naming the field), and a
 * task's output is streamed to disk, so memory grows by far less than the archive.
 */
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { codeOf, msgOf, speechApi, zipOf } from '../beyond.js';
import { madeTask, untar } from './async-helpers.js';
import { ffprobe } from '../../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const VOICE = { voice_id: 'male-qn-qingse' };

/** Text of about `minutes` of audio (99.99 s pauses). */
const longText = (minutes: number) => `a${'<#99.99#>a'.repeat(Math.round((minutes * 60) / 100))}`;

async function createFromZip(api: ReturnType<typeof speechApi>, files: Record<string, string>, audio: Record<string, unknown> = {}) {
  const up = await api.upload('t2a_async_input', zipOf(files), 'in.zip');
  expect(codeOf(up)).toBe(0);
  return api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text_file_id: up.body.file.file_id, voice_setting: VOICE, audio_setting: audio });
}

describe('async task caps', () => {
  it('a zip of 1,001 files is 2013 naming text_file_id and the limit of 1,000, before any work', async () => {
    const api = speechApi(emu.speechUrl, 'caps-files');
    const files = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}.txt`, 'Hi.']));
    const r = await createFromZip(api, files);
    expect(codeOf(r)).toBe(2013);
    expect(msgOf(r)).toMatch(/text_file_id \d+: the zip holds 1001 files, over the emulator's limit of 1000 files per task/);
    const ok = await createFromZip(api, Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`f${i}.txt`, 'Hi.'])));
    expect(codeOf(ok)).toBe(0);
  });

  it("a 400-byte zip of four 1 h texts is 2013: the task's audio in all is over 3 h; two 55 min WAVs at 44.1 kHz stereo are over 1 GB", async () => {
    const api = speechApi(emu.speechUrl, 'caps-audio');
    const hours = { 'a.txt': longText(60), 'b.txt': longText(60), 'c.txt': longText(60), 'd.txt': longText(60) };
    expect(zipOf(hours).length).toBeLessThan(1000);
    const r = await createFromZip(api, hours);
    expect(codeOf(r)).toBe(2013);
    expect(msgOf(r)).toMatch(/text_file_id: the task's audio would last 14\d{3} s in all, over the emulator's limit of 10800 s per task/);
    const big = await createFromZip(api, { 'a.txt': longText(55), 'b.txt': longText(55) }, { format: 'wav', audio_sample_rate: 44100, channel: 2 });
    expect(codeOf(big)).toBe(2013);
    expect(msgOf(big)).toMatch(/audio_setting: the task's audio would be about 1\d{3} MB, over the emulator's limit of 1024 MB per task/);
  });

  it('a task of two 3 min WAVs (64 MB of tar) is made with memory growing by far less than its output', async () => {
    const api = speechApi(emu.speechUrl, 'caps-stream');
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const c = await createFromZip(api, { 'a.txt': longText(3), 'b.txt': longText(3) }, { format: 'wav', audio_sample_rate: 44100, channel: 2 });
    expect(codeOf(c)).toBe(0);
    const task = await madeTask(emu.speechUrl, c.body.task_id).finally(() => clearInterval(timer));
    expect(task.audio_ready).toBe(true);
    const now = (await ctl.clock()).body.now_ms as number;
    await ctl.advance(task.ready_at_ms - now);
    const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${c.body.file_id}`);
    expect(content.bytes.length).toBeGreaterThan(60_000_000);
    // The one-shot build held both files, then the tar beside them (twice the archive).
    expect((peak - rss0) / 1e6).toBeLessThan(content.bytes.length / 2e6);
    const files = untar(content.bytes);
    const wav = files.get(`${c.body.task_id}/a/content-${c.body.task_id}.wav`)!;
    const extra = JSON.parse(files.get(`${c.body.task_id}/a/content-${c.body.task_id}.extra`)!.toString());
    expect(wav.length).toBe(extra.audio_size);
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44); // the true data size, written over the streamed header
    const p = await ffprobe(wav, { ext: 'wav' });
    expect(Math.abs(p.durationMs - extra.audio_length)).toBeLessThanOrEqual(25);
  }, 60_000);
});
