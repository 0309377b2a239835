// Every format x the six T2A sample rates x mono/stereo (x the four bitrates for MP3) is valid
// for ffprobe (and `flac -t`), with the reported rate, channels, bitrate and duration.
import { describe, expect, it } from 'vitest';
import { encodeAudio, mp3Bitrate, synthesize, type AudioFormat } from '../../src/audio/index.js';
import { ffprobe, run, tmpFile } from './helpers.js';

const RATES = [8000, 16000, 22050, 24000, 32000, 44100];
const BITRATES = [32000, 64000, 128000, 256000];
const text = 'Hi there.';

interface Case {
  format: AudioFormat;
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number;
}
const cases: Case[] = [];
for (const sampleRate of RATES)
  for (const channels of [1, 2] as const) {
    for (const bitrate of BITRATES) cases.push({ format: 'mp3', sampleRate, channels, bitrate });
    for (const format of ['wav', 'flac', 'pcm'] as const) cases.push({ format, sampleRate, channels, bitrate: 128000 });
  }

describe('encoded formats', () => {
  it('mp3Bitrate picks the nearest legal bitrate for the sample rate', () => {
    expect(mp3Bitrate(8000, 256000)).toBe(64000);
    expect(mp3Bitrate(8000, 32000)).toBe(32000);
    expect(mp3Bitrate(22050, 256000)).toBe(160000);
    expect(mp3Bitrate(24000, 128000)).toBe(128000);
    expect(mp3Bitrate(44100, 256000)).toBe(256000);
    expect(() => mp3Bitrate(12345, 128000)).toThrow(RangeError);
  });

  it(`${cases.length} combinations pass ffprobe with the reported metadata`, async () => {
    const pcmByShape = new Map<string, Awaited<ReturnType<typeof synthesize>>>();
    for (const sampleRate of RATES)
      for (const channels of [1, 2] as const)
        pcmByShape.set(`${sampleRate}/${channels}`, await synthesize({ text, voices: [{ id: 'v', weight: 1 }], sampleRate, channels }));
    const failures: string[] = [];
    await Promise.all(
      cases.map(async (c) => {
        const src = pcmByShape.get(`${c.sampleRate}/${c.channels}`)!;
        const { bytes, meta } = await encodeAudio(c.format, src, c);
        const label = `${c.format} ${c.sampleRate} Hz ${c.channels} ch ${c.bitrate}`;
        const path = tmpFile(bytes, c.format);
        const raw = c.format === 'pcm' ? ['-f', 's16le', '-ar', String(c.sampleRate), '-ac', String(c.channels)] : [];
        const info = await ffprobe(path, raw);
        const expectBitrate = c.format === 'mp3' ? mp3Bitrate(c.sampleRate, c.bitrate) : c.sampleRate * c.channels * 16;
        const ok =
          info.sampleRate === c.sampleRate &&
          info.channels === c.channels &&
          meta.sampleRate === c.sampleRate &&
          meta.bitrate === expectBitrate &&
          (info.bitRate === null || info.bitRate === expectBitrate) &&
          meta.sizeBytes === bytes.length &&
          Math.abs(info.durationMs - meta.durationMs) <= 1;
        if (!ok) failures.push(`${label}: ffprobe ${JSON.stringify(info)} meta ${JSON.stringify(meta)}`);
        if (c.format === 'flac') await run('flac', ['-t', '-s', path]).catch((e) => failures.push(`${label}: ${e}`));
        if (c.format === 'mp3' && meta.durationMs <= src.durationMs) failures.push(`${label}: MP3 duration lacks delay/padding`);
      }),
    );
    expect(failures).toEqual([]);
  }, 120_000);

  it('MP3 decodes to the reported duration (delay and padding included)', async () => {
    const src = await synthesize({ text, voices: [{ id: 'v', weight: 1 }], sampleRate: 44100, channels: 1 });
    const { bytes, meta } = await encodeAudio('mp3', src, { sampleRate: 44100, channels: 1, bitrate: 32000 });
    const decoded = await run('ffmpeg', ['-v', 'error', '-i', tmpFile(bytes, 'mp3'), '-f', 's16le', '-']);
    expect(Math.round((decoded.length / 2 / 44100) * 1000)).toBe(meta.durationMs);
  });

  it('FLAC decodes bit-exactly with flac -d, and WAV/PCM carry the samples unchanged', async () => {
    for (const channels of [1, 2] as const) {
      const src = await synthesize({ text: 'Bit exact?', voices: [{ id: 'v', weight: 1 }], sampleRate: 22050, channels });
      const want = Buffer.from(src.pcm.buffer, src.pcm.byteOffset, src.pcm.byteLength);
      const flac = await encodeAudio('flac', src, { sampleRate: 22050, channels });
      const path = tmpFile(flac.bytes, 'flac');
      const got = await run('flac', ['-d', '-s', '-c', '--force-raw-format', '--endian=little', '--sign=signed', path]);
      expect(got.equals(want)).toBe(true);
      const wav = await encodeAudio('wav', src, { sampleRate: 22050, channels });
      expect(wav.bytes.length).toBe(44 + want.length);
      expect(wav.bytes.subarray(44).equals(want)).toBe(true);
      expect(wav.bytes.readUInt32LE(4)).toBe(36 + want.length);
      expect((await encodeAudio('pcm', src, { sampleRate: 22050, channels })).bytes.equals(want)).toBe(true);
    }
  });
});
