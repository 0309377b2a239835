// Reading foreign audio: WAV variants, containers, raw PCM, and typed errors.
import { describe, expect, it } from 'vitest';
import { AudioProbeError, decodeToMono, probeAudio, speechActivity } from '../../src/audio/index.js';
import { pcm16Wav } from '../helpers/audio.js';
import { readTmp, tmp } from './helpers.js';
import { run } from '../helpers/tools.js';

async function make(args: string[], ext: string): Promise<Buffer> {
  const path = `${tmp}/probe-${ext}-${args.join('_').replace(/[^a-z0-9_]/gi, '')}.${ext}`;
  // 1.5 s: 0.5 s tone, 0.5 s silence, 0.5 s tone
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=300:d=1.5', '-af', "volume='if(between(t,0.5,1),0,1)':eval=frame", ...args, path]);
  return readTmp(path);
}

describe('probe and decode', () => {
  it('reads common WAV variants, MP3, FLAC and M4A', async () => {
    const cases: [string[], string, string, number, number][] = [
      [['-ar', '16000', '-c:a', 'pcm_s16le'], 'wav', 'wav', 16000, 1],
      [['-ar', '44100', '-ac', '2', '-c:a', 'pcm_s24le'], 'wav', 'wav', 44100, 2],
      [['-ar', '22050', '-c:a', 'pcm_f32le'], 'wav', 'wav', 22050, 1],
      [['-ar', '8000', '-c:a', 'pcm_u8'], 'wav', 'wav', 8000, 1],
      [['-ar', '8000', '-c:a', 'pcm_mulaw'], 'wav', 'wav', 8000, 1],
      [['-ar', '24000', '-b:a', '64k'], 'mp3', 'mp3', 24000, 1],
      [['-ar', '48000', '-ac', '2'], 'flac', 'flac', 48000, 2],
      [['-ar', '16000', '-c:a', 'aac'], 'm4a', 'm4a', 16000, 1],
    ];
    for (const [args, ext, format, sampleRate, channels] of cases) {
      const bytes = await make(args, ext);
      const p = await probeAudio(bytes);
      expect(p, `${ext} ${args.join(' ')}`).toMatchObject({ format, sampleRate, channels });
      expect(Math.abs(p.durationMs - 1500), `${ext} ${args.join(' ')}`).toBeLessThan(ext === 'wav' || ext === 'flac' ? 2 : 120);
      if (ext !== 'm4a') {
        const d = await decodeToMono(bytes);
        expect(d.sampleRate).toBe(sampleRate);
        const spans = speechActivity(d.samples, d.sampleRate);
        expect(spans, `${ext} ${args.join(' ')}`).toHaveLength(2);
        expect(spans[0]!.startMs).toBeLessThan(80); // MP3 adds a little delay
        expect(Math.abs(spans[1]!.startMs - spans[0]!.endMs - 500)).toBeLessThan(60);
      } else await expect(decodeToMono(bytes)).rejects.toMatchObject({ code: 'unsupported' });
    }
  }, 60_000);

  it('raw PCM needs a hint; unknown or broken bytes give typed errors', async () => {
    const raw = Buffer.alloc(32000);
    expect(await probeAudio(raw, { rawPcm: { sampleRate: 16000, channels: 1 } })).toEqual({ format: 'pcm', sampleRate: 16000, channels: 1, durationMs: 1000 });
    expect((await probeAudio(raw, { filename: 'a.pcm' })).format).toBe('pcm');
    await expect(probeAudio(Buffer.from('definitely not audio'))).rejects.toBeInstanceOf(AudioProbeError);
    await expect(probeAudio(Buffer.from('definitely not audio'))).rejects.toMatchObject({ code: 'unsupported' });
    await expect(probeAudio(Buffer.alloc(0))).rejects.toMatchObject({ code: 'empty' });
    const brokenWav = Buffer.from('RIFF\x10\x00\x00\x00WAVEjunk', 'latin1');
    await expect(probeAudio(brokenWav)).rejects.toMatchObject({ code: 'undecodable' });
    const brokenMp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(50, 9)]);
    await expect(decodeToMono(brokenMp3)).rejects.toMatchObject({ code: 'undecodable' });
  });

  // A 16-bit mono 16 kHz WAV header (44 bytes) followed by `data` bytes; `edit` breaks it.
  const wav = (data: number, edit: (b: Buffer) => void = () => {}) => {
    const b = pcm16Wav(data);
    edit(b);
    return b;
  };

  it('malformed input gives the typed error for what is wrong, never a bogus result', async () => {
    const both = async (bytes: Buffer, code: string, hint = {}) => {
      await expect(probeAudio(bytes, hint)).rejects.toMatchObject({ name: 'AudioProbeError', code });
      await expect(decodeToMono(bytes, hint)).rejects.toMatchObject({ name: 'AudioProbeError', code });
    };
    for (const cut of [12, 20, 30, 40]) await both(wav(0).subarray(0, cut), 'undecodable');
    await both(wav(0), 'empty'); // a zero-length data chunk
    await both(wav(1), 'empty'); // not even one whole sample frame
    await both(
      wav(100, (b) => b.writeUInt16LE(65535, 22)),
      'undecodable',
    ); // 65535 channels
    await both(
      wav(100, (b) => b.writeUInt32LE(4e9, 24)),
      'undecodable',
    ); // 4 GHz
    await both(
      wav(100, (b) => b.writeUInt32LE(1, 24)),
      'undecodable',
    ); // 1 Hz: 50 s of "audio" in 100 bytes
    await both(
      wav(100, (b) => b.writeUInt16LE(12, 34)),
      'unsupported',
    ); // 12-bit PCM
    await both(
      wav(100, (b) => b.writeUInt16LE(0x55, 20)),
      'unsupported',
    ); // MP3 inside WAV
    let seed = 1;
    const random = Buffer.from(Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff));
    await both(random, 'unsupported', { filename: 'song.mp3', contentType: 'audio/mpeg' });
    await both(Buffer.alloc(1), 'empty', { filename: 'a.pcm' });
    await both(Buffer.alloc(64), 'undecodable', { contentType: 'audio/pcm;rate=0' });
    await both(Buffer.alloc(64), 'undecodable', { rawPcm: { sampleRate: 16000, channels: 0 } });
  });

  it('a header declaring 4 GB reads only the bytes that are there', async () => {
    const b = wav(3200, (x) => {
      x.writeUInt32LE(0xfffffff0, 4);
      x.writeUInt32LE(0xfffffff0, 40);
    });
    expect(await probeAudio(b)).toEqual({ format: 'wav', sampleRate: 16000, channels: 1, durationMs: 100 });
    expect((await decodeToMono(b)).samples.length).toBe(1600);
  });

  it('speechActivity handles hours of audio (no argument-spread overflow)', () => {
    const sr = 200; // 20 ms windows of 4 samples: an hour is 360,000 windows
    const x = new Float32Array(3600 * sr);
    x.fill(0.5, 10 * sr, 20 * sr);
    const spans = speechActivity(x, sr);
    expect(spans).toHaveLength(1);
    expect(Math.abs(spans[0]!.startMs - 10_000)).toBeLessThanOrEqual(20); // 20 ms windows
    expect(Math.abs(spans[0]!.endMs - 20_000)).toBeLessThanOrEqual(20);
  });
});
