/**
 * Small inputs that ask for a lot of work, made where they are used (tests and the soak; no vitest
 * here): a FLAC of long silence (CONSTANT frames of 32768 samples, about 12 bytes each), an IMA ADPCM
 * WAV, a zip of many small files, and files made by ffmpeg.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc16Update, crc8 } from '../../src/audio/encode/flac.js';
import { zipOf } from './zip.js';

/** FLAC's UTF-8-like coding of a frame number. */
function codedNumber(n: number): number[] {
  if (n < 0x80) return [n];
  if (n < 0x800) return [0xc0 | (n >> 6), 0x80 | (n & 0x3f)];
  if (n < 0x10000) return [0xe0 | (n >> 12), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
  return [0xf0 | (n >> 18), 0x80 | ((n >> 12) & 0x3f), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
}

/**
 * Mono 16-bit 44.1 kHz FLAC of `seconds` of silence. `declareTotal: false` leaves the total at 0 in
 * STREAMINFO, as a streaming encoder does (its length is then found from the last frame); a number
 * declares that many seconds whatever the frames hold (a header that lies).
 */
export function silentFlac(seconds: number, declareTotal: boolean | number = true): Buffer {
  const rate = 44100;
  const block = 32768;
  const frames = Math.ceil((seconds * rate) / block);
  const total = typeof declareTotal === 'number' ? Math.round(declareTotal * rate) : frames * block;
  const info = Buffer.alloc(34);
  info.writeUInt16BE(block, 0);
  info.writeUInt16BE(block, 2);
  // rate (20 bits) | channels-1 (3) | bits-1 (5) | total samples (36)
  const hi = rate * 2 ** 12 + 0 * 2 ** 9 + 15 * 2 ** 4 + (declareTotal ? Math.floor(total / 2 ** 32) : 0);
  info.writeUIntBE(hi, 10, 4);
  info.writeUInt32BE(declareTotal ? total % 2 ** 32 : 0, 14);
  const parts: Buffer[] = [Buffer.from('fLaC'), Buffer.from([0x80, 0, 0, 34]), info];
  for (let f = 0; f < frames; f++) {
    // sync, fixed blocks; block code 15 (32768), rate code 9 (44.1 kHz); mono, 16 bits
    const head = [0xff, 0xf8, 0xf9, 0x08, ...codedNumber(f)];
    head.push(crc8(Uint8Array.from(head), 0, head.length));
    const frame = [...head, 0x00, 0x00, 0x00]; // CONSTANT subframe of 0
    let crc = 0;
    for (const b of frame) crc = crc16Update(crc, b);
    frame.push(crc >> 8, crc & 0xff);
    parts.push(Buffer.from(frame));
  }
  return Buffer.concat(parts);
}

/** Output of ffmpeg for lavfi `input` with the codec arguments, as bytes. */
export function ffmpegAudio(input: string, seconds: number, args: string[], ext: string): Buffer {
  const out = join(mkdtempSync(join(tmpdir(), 'hostile-')), `a.${ext}`);
  execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', input, '-t', String(seconds), ...args, out]);
  return readFileSync(out);
}

/** A mono IMA ADPCM WAV of `seconds` at `rate` (256-byte blocks of 505 samples; the nibbles are noise). */
export function adpcmWav(seconds: number, rate = 16000): Buffer {
  const blocks = Math.ceil((seconds * rate) / 505);
  const data = Buffer.alloc(blocks * 256);
  for (let b = 0; b < blocks; b++) {
    data.writeInt16LE(0, b * 256);
    data[b * 256 + 2] = 20; // step index
    for (let i = 4; i < 256; i++) data[b * 256 + i] = (b * 131 + i * 29) & 0xff;
  }
  const h = Buffer.alloc(48);
  h.write('RIFF', 0);
  h.writeUInt32LE(40 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(20, 16);
  h.writeUInt16LE(17, 20); // IMA ADPCM
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(Math.round((rate * 256) / 505), 28);
  h.writeUInt16LE(256, 32); // block align
  h.writeUInt16LE(4, 34); // bits per sample
  h.writeUInt16LE(2, 36); // extra size
  h.writeUInt16LE(505, 38); // samples per block
  h.write('data', 40);
  h.writeUInt32LE(data.length, 44);
  return Buffer.concat([h, data]);
}

/** A zip of stored (uncompressed) files. */
export const storedZip = (files: Record<string, string>): Buffer => zipOf(files, 'store');
