// Audio of every container speech to text accepts, made by ffmpeg from a WAV (the emulator's own or built here).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './tools.js';
import { pcm16Wav } from './audio.js';

/** Output file name and ffmpeg arguments of each kind of upload. */
export const KINDS = {
  wav: { ext: 'wav', args: ['-c:a', 'pcm_s16le'] },
  rf64: { ext: 'wav', args: ['-c:a', 'pcm_s16le', '-rf64', 'always'] },
  aiff: { ext: 'aiff', args: ['-c:a', 'pcm_s16be'] },
  flac: { ext: 'flac', args: ['-c:a', 'flac'] },
  mp3: { ext: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  'mp3-noxing': { ext: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-write_xing', '0'] },
  aac: { ext: 'aac', args: ['-c:a', 'aac', '-b:a', '64k', '-f', 'adts'] },
  m4a: { ext: 'm4a', args: ['-c:a', 'aac', '-b:a', '64k'] },
  'm4a-alac': { ext: 'm4a', args: ['-c:a', 'alac'] },
  opus: { ext: 'ogg', args: ['-c:a', 'libopus', '-b:a', '32k'] },
  vorbis: { ext: 'ogg', args: ['-c:a', 'libvorbis'] },
} as const;

export type Kind = keyof typeof KINDS;

/** `wav` converted by ffmpeg into `kind`. */
export async function transcode(wav: Buffer, kind: Kind): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'stt-'));
  try {
    const input = join(dir, 'in.wav');
    const output = join(dir, `out.${KINDS[kind].ext}`);
    writeFileSync(input, wav);
    await run('ffmpeg', ['-v', 'error', '-i', input, ...KINDS[kind].args, '-y', output]);
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A 16-bit PCM WAV of a tone (foreign audio: no signature). */
export function toneWav(seconds: number, sampleRate = 16000, hz = 440): Buffer {
  const frames = Math.round(seconds * sampleRate);
  const b = pcm16Wav(frames * 2, sampleRate);
  for (let i = 0; i < frames; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / sampleRate)), 44 + i * 2);
  return b;
}

/** A WAV header followed by `dataBytes` of zero samples (any layout), for size and duration limits. */
export function silentWav(dataBytes: number, sampleRate: number, channels: number, bits: number): Buffer {
  const b = Buffer.alloc(44 + dataBytes);
  const block = (channels * bits) / 8;
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(36 + dataBytes, 4);
  b.write('WAVEfmt ', 8, 'latin1');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(channels, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(sampleRate * block, 28);
  b.writeUInt16LE(block, 32);
  b.writeUInt16LE(bits, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(dataBytes, 40);
  if (bits === 8) b.fill(128, 44);
  return b;
}
