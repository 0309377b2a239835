// ffprobe and ffmpeg on a file or on bytes (saved to a temporary file, the way a user saves a download).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './tools.js';

export interface Probe {
  codec: string;
  sampleRate: number;
  channels: number;
  /** The stream's bit rate, or null when ffprobe states none for the stream. */
  bitRate: number | null;
  /** The container's overall bit rate, or null. */
  formatBitRate: number | null;
  /** Bits per sample (0 for compressed codecs). */
  bits: number;
  /** The container's duration. */
  durationMs: number;
  /** The stream's own duration, or null when ffprobe states none. */
  streamDurationMs: number | null;
  /** ffprobe's JSON as it came, for checks on fields not listed here. */
  raw: { streams: Record<string, unknown>[]; format: Record<string, unknown> };
}

const num = (v: unknown): number | null => (v === undefined || v === null || v === '' || v === 'N/A' ? null : Number(v));

/**
 * Probes `input`: a path, or bytes written to a temporary file named with `ext`
 * (default `bin`; ffprobe finds the format by content). `inputArgs` go before the
 * input, e.g. `['-f', 's16le', '-ar', '16000', '-ac', '1']` for raw PCM.
 */
export function ffprobe(input: Buffer | string, opts: { ext?: string; inputArgs?: string[] } = {}): Promise<Probe> {
  return withFile(input, opts.ext, async (path) => {
    const out = await run('ffprobe', ['-v', 'error', ...(opts.inputArgs ?? []), '-show_streams', '-show_format', '-of', 'json', path]);
    const raw = JSON.parse(out.toString()) as Probe['raw'];
    const s = raw.streams[0]!;
    const streamDuration = num(s.duration);
    return {
      codec: String(s.codec_name),
      sampleRate: Number(s.sample_rate),
      channels: Number(s.channels),
      bitRate: num(s.bit_rate),
      formatBitRate: num(raw.format.bit_rate),
      bits: Number(s.bits_per_sample ?? 0),
      durationMs: Number(raw.format.duration) * 1000,
      streamDurationMs: streamDuration === null ? null : streamDuration * 1000,
      raw,
    };
  });
}

/** Decodes `input` (a path, or bytes saved as `a.<ext>`) with ffmpeg to raw 16-bit mono PCM at `rate`, as a user feeding a recognizer would. */
export function ffmpegPcm16(input: Buffer | string, opts: { ext?: string; rate?: number } = {}): Promise<Buffer> {
  return withFile(input, opts.ext, (path) => run('ffmpeg', ['-v', 'error', '-i', path, '-ar', String(opts.rate ?? 16000), '-ac', '1', '-f', 's16le', '-']));
}

/** Runs `fn` on a path: `input` itself, or bytes written to a temporary `a.<ext>` removed afterwards. */
async function withFile<T>(input: Buffer | string, ext = 'bin', fn: (path: string) => Promise<T>): Promise<T> {
  if (typeof input === 'string') return fn(input);
  const dir = mkdtempSync(join(tmpdir(), 'probe-'));
  try {
    const path = join(dir, `a.${ext}`);
    writeFileSync(path, input);
    return await fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
