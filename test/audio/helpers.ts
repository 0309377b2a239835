// Test helpers: external tools with bounded concurrency, and signal measurements.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { spectrum } from '../helpers/audio.js';
import { run } from '../helpers/tools.js';

export const tmp = mkdtempSync(join(tmpdir(), 'audio-test-'));
// Each test file that imports the helpers gets its own folder, removed when the file is done.
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
export function tmpFile(bytes: Buffer, ext: string): string {
  const path = join(tmp, `f${n++}.${ext}`);
  writeFileSync(path, bytes);
  return path;
}
export const readTmp = (path: string) => readFileSync(path);

/** Decodes any file with ffmpeg to mono float at its own (or a given) rate. */
export async function ffmpegMono(path: string, extra: string[] = [], inputArgs: string[] = []): Promise<Float32Array> {
  const out = await run('ffmpeg', ['-v', 'error', ...inputArgs, '-i', path, ...extra, '-ac', '1', '-f', 'f32le', '-']);
  return new Float32Array(out.buffer, out.byteOffset, out.length / 4).slice();
}

export function dominantHz(x: Float32Array, sampleRate: number): number {
  const mag = spectrum(x);
  let best = 1;
  for (let i = 2; i < mag.length; i++) if (mag[i]! > mag[best]!) best = i;
  return (best * sampleRate) / (mag.length * 2);
}

export function centroidHz(x: Float32Array, sampleRate: number): number {
  const mag = spectrum(x);
  let num = 0;
  let den = 0;
  for (let i = 0; i < mag.length; i++) {
    num += ((i * sampleRate) / (mag.length * 2)) * mag[i]!;
    den += mag[i]!;
  }
  return num / den;
}

/** L1 distance between two RMS-normalised spectra (0 = same shape). */
export function spectralDistance(a: Float32Array, b: Float32Array): number {
  const size = Math.max(a.length, b.length, 1 << 15);
  const sa = spectrum(a, size);
  const sb = spectrum(b, size);
  const ta = sa.reduce((x, y) => x + y, 0);
  const tb = sb.reduce((x, y) => x + y, 0);
  let d = 0;
  for (let i = 0; i < sa.length; i++) d += Math.abs(sa[i]! / ta - sb[i]! / tb);
  return d;
}

/** Longest run of exact zeros in [from, to): [start, length]. */
export function longestZeroRun(pcm: Int16Array, from = 0, to = pcm.length): [number, number] {
  let best: [number, number] = [from, 0];
  let start = -1;
  for (let i = from; i <= to; i++) {
    if (i < to && pcm[i] === 0) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (i - start > best[1]) best = [start, i - start];
      start = -1;
    }
  }
  return best;
}
