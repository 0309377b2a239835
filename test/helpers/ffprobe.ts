// ffprobe of a file or of bytes (saved to a temporary file, the way a user saves a download).
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
export async function ffprobe(input: Buffer | string, opts: { ext?: string; inputArgs?: string[] } = {}): Promise<Probe> {
  let dir: string | undefined;
  let path: string;
  if (typeof input === 'string') path = input;
  else {
    dir = mkdtempSync(join(tmpdir(), 'probe-'));
    path = join(dir, `a.${opts.ext ?? 'bin'}`);
    writeFileSync(path, input);
  }
  try {
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
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
