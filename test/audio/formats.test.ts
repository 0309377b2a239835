// Every format x the six T2A sample rates x mono/stereo (x the four bitrates for MP3) is valid
// for ffprobe (and `flac -t`), with the reported rate, channels, bitrate and duration.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { splitFlacFrames } from '../../src/audio/decode.js';
import { decodeToMono, encodeAudio, mp3Bitrate, synthesize, type AudioFormat } from '../../src/audio/index.js';
import { tmpFile } from './helpers.js';
import { run } from '../helpers/tools.js';
import { ffprobe } from '../helpers/ffprobe.js';

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
        const info = await ffprobe(path, { inputArgs: raw });
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
        if (c.format === 'mp3' || c.format === 'flac') {
          // what a decoder (mpg123, libFLAC) actually outputs, sample for sample
          const d = await decodeToMono(bytes);
          const decodedMs = Math.round((d.samples.length * 1000) / d.sampleRate);
          if (decodedMs !== meta.durationMs || d.sampleRate !== c.sampleRate)
            failures.push(`${label}: decoded ${decodedMs} ms at ${d.sampleRate} Hz, meta ${meta.durationMs} ms`);
        }
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

  it('FLAC uses CONSTANT, VERBATIM and FIXED subframes where each fits, with true STREAMINFO totals and MD5', async () => {
    // 4096 frames each of silence, white noise and a tone, then a short tail: one block apiece.
    const sr = 16000;
    let seed = 5;
    const pcm = new Int16Array(4096 * 3 + 1000);
    for (let i = 4096; i < 8192; i++) pcm[i] = ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xffff) - 32768;
    for (let i = 8192; i < pcm.length; i++) pcm[i] = Math.round(12000 * Math.sin(i / 9));
    const { bytes } = await encodeAudio('flac', { pcm, sampleRate: sr, channels: 1 }, { sampleRate: sr, channels: 1 });
    const types = splitFlacFrames(bytes).map((f) => {
      const utf = f[4]! < 0x80 ? 1 : Math.clz32(~(f[4]! << 24)); // leading ones of the UTF-8 number
      const at = 4 + utf + (f[2]! >> 4 === 7 ? 2 : 0) + 1; // sync, codes, number, 16-bit size, CRC-8
      const t = (f[at]! >> 1) & 0x3f;
      return t === 0 ? 'CONSTANT' : t === 1 ? 'VERBATIM' : t >= 8 && t <= 12 ? 'FIXED' : `type ${t}`;
    });
    expect(types).toEqual(['CONSTANT', 'VERBATIM', 'FIXED', 'FIXED']);
    // STREAMINFO: 36-bit total samples in bytes 21..25, MD5 of the s16le samples in 26..41
    expect((bytes[21]! & 0x0f) * 2 ** 32 + bytes.readUInt32BE(22)).toBe(pcm.length);
    const md5 = createHash('md5').update(Buffer.from(pcm.buffer)).digest();
    expect(bytes.subarray(26, 42).equals(md5)).toBe(true);
    const path = tmpFile(bytes, 'flac');
    await run('flac', ['-t', '-s', path]);
    const got = await run('flac', ['-d', '-s', '-c', '--force-raw-format', '--endian=little', '--sign=signed', path]);
    expect(got.equals(Buffer.from(pcm.buffer))).toBe(true);
  });
});
