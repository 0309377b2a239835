/** Faults the speech socket's sender applies around its encoder, decided by the socket's stream guard. */
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { textOf } from './pacing-helpers.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

const { emu } = emulatorForFile({ plane: 'speech' });
const frames = (audio_setting: object) => [{ ...START, audio_setting }, { event: 'task_continue', text: textOf(12) }, { event: 'task_finish' }];

describe('audio faults on the speech WebSocket', () => {
  it('gap_ms=500 at gap_at_ms=800: exact digital silence in the PCM there, extra_info half a second longer', async () => {
    const pcm = { format: 'pcm', sample_rate: 16000 };
    const [normal] = piecesOf((await session(emu.speechUrl, frames(pcm))).messages);
    const [gapped] = piecesOf((await session(emu.speechUrl, frames(pcm), { headers: { 'x-emulator-fault': 'gap_ms=500;gap_at_ms=800' } })).messages);
    expect(gapped!.extra.audio_length - normal!.extra.audio_length).toBe(500);
    expect(gapped!.audio.length - normal!.audio.length).toBe(500 * 32);
    const silence = gapped!.audio.subarray(800 * 32, 1300 * 32);
    expect(silence.every((b) => b === 0)).toBe(true);
    expect(gapped!.audio.subarray(0, 800 * 32).equals(normal!.audio.subarray(0, 800 * 32))).toBe(true);
    expect(gapped!.audio.subarray(1300 * 32).equals(normal!.audio.subarray(800 * 32))).toBe(true);
  });

  it('split_frame=1: MP3 chunk boundaries inside frames, the same bytes joined', async () => {
    const mp3 = { format: 'mp3', sample_rate: 32000, bitrate: 128000 };
    const normal = (await session(emu.speechUrl, frames(mp3))).messages.filter((m) => m.event === 'task_continued');
    const split = (await session(emu.speechUrl, frames(mp3), { headers: { 'x-emulator-fault': 'split_frame=1' } })).messages.filter(
      (m) => m.event === 'task_continued',
    );
    const join = (ms: any[]) => Buffer.concat(ms.map((m) => Buffer.from(m.data.audio, 'hex')));
    expect(join(split).equals(join(normal))).toBe(true);
    const starts = split
      .slice(1)
      .map((m) => Buffer.from(m.data.audio, 'hex'))
      .filter((b) => b.length > 1);
    expect(starts.some((b) => !(b[0] === 0xff && (b[1]! & 0xe0) === 0xe0))).toBe(true);
    const p = await ffprobe(join(split), { ext: 'mp3' });
    expect(p.durationMs).toBeGreaterThan(1000);
  });

  it('extra_info_mismatch=1 inflates the is_final extra_info by 10%; corrupt_bytes=8 flips at most 8 bytes after the first chunk', async () => {
    const pcm = { format: 'pcm', sample_rate: 16000 };
    const [normal] = piecesOf((await session(emu.speechUrl, frames(pcm))).messages);
    const result = await session(emu.speechUrl, frames(pcm), { headers: { 'x-emulator-fault': 'extra_info_mismatch=1;corrupt_bytes=8' } });
    const [bad] = piecesOf(result.messages);
    expect(bad!.extra.audio_length).toBe(Math.round(normal!.extra.audio_length * 1.1));
    expect(bad!.extra.audio_size).toBe(Math.round(normal!.extra.audio_size * 1.1));
    expect(bad!.audio.length).toBe(normal!.audio.length);
    let differ = 0;
    for (let i = 0; i < bad!.audio.length; i++) if (bad!.audio[i] !== normal!.audio[i]) differ++;
    expect(differ).toBeGreaterThan(0);
    expect(differ).toBeLessThanOrEqual(8);
    const first = Buffer.from(result.messages.find((m) => m.event === 'task_continued').data.audio, 'hex');
    expect(bad!.audio.subarray(0, first.length).equals(normal!.audio.subarray(0, first.length))).toBe(true);
  });
});
