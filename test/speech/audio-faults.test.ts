import { rms, samplesOf } from '../helpers/audio.js';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';
import { chunkAudio, chunkHex, streamT2a, textOf } from './pacing-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

const TEXT = textOf(14);
const mp3 = { text: TEXT, audio_setting: { format: 'mp3', sample_rate: 32000, bitrate: 128000 } };
const pcm = { text: TEXT, audio_setting: { format: 'pcm', sample_rate: 16000 } };

async function lastNote(): Promise<string> {
  return (await ctl.journal({ path: '/v1/t2a_v2' })).body.entries[0].note;
}

describe('faults inside the audio of the T2A stream', () => {
  it('drop_final=1 ends the stream cleanly without the status 2 event', async () => {
    const s = await streamT2a(emu.speechUrl, pcm, { fault: 'drop_final=1' });
    expect(s.broken).toBe(false);
    expect(s.events.length).toBeGreaterThan(1);
    expect(s.events.every((e) => e.body.data.status === 1 && e.body.extra_info === undefined)).toBe(true);
    expect(await lastNote()).toContain('audio faults: drop_final=1');
  });

  it('duplicate_chunk=2 sends the second chunk twice; hex_odd=3 leaves chunk 3 an odd hex string', async () => {
    const normal = chunkHex(await streamT2a(emu.speechUrl, pcm));
    const dup = chunkHex(await streamT2a(emu.speechUrl, pcm, { fault: 'duplicate_chunk=2' }));
    expect(dup.length).toBe(normal.length + 1);
    expect(dup[1]).toBe(normal[1]);
    expect(dup[2]).toBe(normal[1]);
    expect(dup.slice(3)).toEqual(normal.slice(2));
    const odd = chunkHex(await streamT2a(emu.speechUrl, pcm, { fault: 'hex_odd=3' }));
    expect(odd[2]!.length % 2).toBe(1);
    expect(odd[2]).toBe(normal[2]!.slice(0, -1));
    expect(odd.filter((h) => h.length % 2 === 1)).toHaveLength(1);
  });

  it('split_frame=1 moves chunk boundaries inside MP3 frames; the chunks join to the same bytes', async () => {
    const normal = await streamT2a(emu.speechUrl, mp3);
    const split = await streamT2a(emu.speechUrl, mp3, { fault: 'split_frame=1' });
    const chunks = chunkHex(split).map((h) => Buffer.from(h, 'hex'));
    expect(Buffer.compare(Buffer.concat(chunks), chunkAudio(normal))).toBe(0);
    // Every chunk but the first starts inside a frame (no 0xFFE frame sync at its start).
    for (const c of chunks.slice(1)) expect(c[0] === 0xff && (c[1]! & 0xe0) === 0xe0).toBe(false);
    expect(chunkHex(normal).every((h) => h.startsWith('ff'))).toBe(true);
    const p = await ffprobe(Buffer.concat(chunks), { ext: 'mp3' });
    expect(Math.abs(p.durationMs - normal.events.at(-1)!.body.extra_info.audio_length)).toBeLessThan(100);
  });

  it('gap_ms=800 at gap_at_ms=1000 inserts digital silence there; reported durations grow with it', async () => {
    const normal = await streamT2a(emu.speechUrl, mp3);
    const gapped = await streamT2a(emu.speechUrl, mp3, { fault: 'gap_ms=800;gap_at_ms=1000' });
    const before = normal.events.at(-1)!.body.extra_info.audio_length;
    const after = gapped.events.at(-1)!.body.extra_info.audio_length;
    expect(Math.abs(after - before - 800)).toBeLessThanOrEqual(30);
    const decoded = await ffmpegPcm16(chunkAudio(gapped), { ext: 'mp3', rate: 16000 });
    const plain = await ffmpegPcm16(chunkAudio(normal), { ext: 'mp3', rate: 16000 });
    // MP3 decoding shifts audio by its delay (some tens of ms): look inside the gap's edges.
    // RMS in 16-bit units between two times at 16 kHz (16 samples a millisecond).
    expect(32768 * rms(samplesOf(decoded), 1100 * 16, 1700 * 16)).toBeLessThan(20);
    expect(32768 * rms(samplesOf(plain), 0, 1000 * 16)).toBeGreaterThan(200);
    expect(32768 * rms(samplesOf(decoded), 1900 * 16, 2600 * 16)).toBeGreaterThan(50);
    expect(Math.abs(decoded.length / 32 - plain.length / 32 - 800)).toBeLessThan(60);
    expect(await lastNote()).toContain('gap_ms=800 at 1000 ms');
  });

  it('corrupt_bytes=12 flips bytes after the first chunk; a tolerant decoder plays on', async () => {
    const normal = chunkAudio(await streamT2a(emu.speechUrl, mp3));
    const firstLen = chunkHex(await streamT2a(emu.speechUrl, mp3))[0]!.length / 2;
    const bad = chunkAudio(await streamT2a(emu.speechUrl, mp3, { fault: 'corrupt_bytes=12' }));
    expect(bad.length).toBe(normal.length);
    let differ = 0;
    for (let i = 0; i < bad.length; i++) if (bad[i] !== normal[i]) differ++;
    expect(differ).toBeGreaterThan(0);
    expect(differ).toBeLessThanOrEqual(12);
    expect(bad.subarray(0, firstLen).equals(normal.subarray(0, firstLen))).toBe(true);
    const decoded = await ffmpegPcm16(bad, { ext: 'mp3', rate: 16000 });
    const plain = await ffmpegPcm16(normal, { ext: 'mp3', rate: 16000 });
    expect(Math.abs(decoded.length - plain.length) / plain.length).toBeLessThan(0.1);
    expect(await lastNote()).toMatch(/audio faults: corrupt_bytes=\d+/);
  });

  it('extra_info_mismatch=1 claims a duration and size 10% larger than the bytes', async () => {
    const normal = (await streamT2a(emu.speechUrl, pcm)).events.at(-1)!.body.extra_info;
    const s = await streamT2a(emu.speechUrl, pcm, { fault: 'extra_info_mismatch=1' });
    const info = s.events.at(-1)!.body.extra_info;
    expect(info.audio_length).toBe(Math.round(normal.audio_length * 1.1));
    expect(info.audio_size).toBe(Math.round(normal.audio_size * 1.1));
    expect(chunkAudio(s).length).toBe(normal.audio_size);
  });
});
