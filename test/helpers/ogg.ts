// Ogg/Opus and μ-law as a client checks them: the pages read back by hand (RFC 3533/7845), and
// ffmpeg's own verdict (exit code, stderr, decoded samples).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ffprobe } from './ffprobe.js';

export interface Page {
  flags: number;
  granule: bigint;
  serial: number;
  sequence: number;
  crc: number;
  /** The CRC computed here, bit by bit (polynomial 0x04C11DB7, initial 0, unreflected). */
  crcComputed: number;
  packets: Buffer[];
  /** Byte offsets of the page in the stream. */
  start: number;
  end: number;
}

function crcBitwise(bytes: Buffer): number {
  let crc = 0;
  for (const b of bytes) {
    crc = (crc ^ (b << 24)) >>> 0;
    for (let k = 0; k < 8; k++) crc = (crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1) >>> 0;
  }
  return crc;
}

/** The pages of an Ogg stream; throws when the bytes are not pages end to end. */
export function oggPages(bytes: Buffer): Page[] {
  const pages: Page[] = [];
  for (let at = 0; at < bytes.length;) {
    if (bytes.toString('latin1', at, at + 4) !== 'OggS') throw new Error(`no page at byte ${at}`);
    const segments = bytes[at + 26]!;
    const lacing = [...bytes.subarray(at + 27, at + 27 + segments)];
    const bodyLength = lacing.reduce((a, b) => a + b, 0);
    const end = at + 27 + segments + bodyLength;
    const raw = Buffer.from(bytes.subarray(at, end));
    const crc = raw.readUInt32LE(22);
    raw.writeUInt32LE(0, 22);
    const packets: Buffer[] = [];
    let p = at + 27 + segments;
    let size = 0;
    for (const l of lacing) {
      size += l;
      if (l < 255) {
        packets.push(bytes.subarray(p, p + size));
        p += size;
        size = 0;
      }
    }
    if (size) throw new Error('a packet continues on the next page');
    pages.push({
      flags: bytes[at + 5]!,
      granule: bytes.readBigInt64LE(at + 6),
      serial: bytes.readUInt32LE(at + 14),
      sequence: bytes.readUInt32LE(at + 18),
      crc,
      crcComputed: crcBitwise(raw),
      packets,
      start: at,
      end,
    });
    at = end;
  }
  return pages;
}

/** Runs ffmpeg (or ffprobe) and answers its exit code, stdout and stderr without throwing. */
export function tool(cmd: string, args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'buffer', maxBuffer: 1 << 28 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr: stderr.toString() }),
    );
  });
}

async function withFile<T>(bytes: Buffer, ext: string, fn: (path: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'codec-'));
  try {
    const path = join(dir, `x.${ext}`);
    writeFileSync(path, bytes);
    return await fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `ffmpeg -v error [inputArgs] -i x.<ext> -f null -`: exit code and stderr. */
export function ffmpegVerdict(bytes: Buffer, ext: string, inputArgs: string[] = []) {
  return withFile(bytes, ext, async (path) => {
    const r = await tool('ffmpeg', ['-v', 'error', ...inputArgs, '-i', path, '-f', 'null', '-']);
    return { code: r.code, stderr: r.stderr };
  });
}

/** Sample frames ffmpeg decodes (at 48 kHz for Opus, whatever rate it was made at). */
export function decodedFrames(bytes: Buffer, ext: string): Promise<number> {
  return withFile(bytes, ext, async (path) => {
    const r = await tool('ffmpeg', ['-v', 'error', '-i', path, '-ac', '1', '-f', 's16le', '-']);
    if (r.code) throw new Error(r.stderr);
    return r.stdout.length / 2;
  });
}

/**
 * The acceptance checks of an Ogg/Opus unit (E14): ffmpeg decodes it with exit 0 and empty stderr,
 * ffprobe says opus with the channels, the decoded 48 kHz samples equal `audio_length` within 1 ms,
 * the page layout is the spec's (OpusHead, OpusTags, whole packets, EOS granule). Returns the pages.
 */
export async function checkOpus(bytes: Buffer, want: { channels: number; sampleRate: number; audioLengthMs: number }): Promise<Page[]> {
  expect(await ffmpegVerdict(bytes, 'ogg')).toEqual({ code: 0, stderr: '' });
  const probe = await ffprobe(bytes, { ext: 'ogg' });
  expect([probe.codec, probe.channels]).toEqual(['opus', want.channels]);
  const frames = await decodedFrames(bytes, 'ogg');
  expect(Math.abs((frames / 48000) * 1000 - want.audioLengthMs)).toBeLessThanOrEqual(1);
  const pages = oggPages(bytes);
  for (const p of pages) expect(p.crc).toBe(p.crcComputed);
  expect(new Set(pages.map((p) => p.serial)).size).toBe(1);
  expect(pages.map((p) => p.sequence)).toEqual(pages.map((_, i) => i));
  const [head, tags] = pages;
  expect(head!.flags).toBe(2);
  expect(head!.granule).toBe(0n);
  expect(head!.packets).toHaveLength(1);
  const h = head!.packets[0]!;
  expect(h.toString('latin1', 0, 8)).toBe('OpusHead');
  expect([h[8], h[9], h.readUInt16LE(10), h.readUInt32LE(12), h.readInt16LE(16), h[18]]).toEqual([1, want.channels, 312, want.sampleRate, 0, 0]);
  expect(tags!.granule).toBe(0n);
  expect(tags!.packets[0]!.toString('latin1', 0, 8)).toBe('OpusTags');
  expect(tags!.packets[0]!.toString('utf8')).toMatch(/ENCODER=speech-emulator \d+\.\d+\.\d+/);
  const audio = pages.slice(2);
  expect(audio.length).toBeGreaterThan(0);
  for (const p of audio) expect(p.packets.length).toBeGreaterThanOrEqual(1);
  for (const p of audio) expect(p.packets.length).toBeLessThanOrEqual(10);
  let packets = 0;
  for (const p of audio.slice(0, -1)) {
    packets += p.packets.length;
    expect(p.flags).toBe(0);
    expect(p.granule).toBe(BigInt(packets * 960));
  }
  const last = audio.at(-1)!;
  expect(last.flags).toBe(4);
  expect(last.granule).toBe(BigInt(312 + frames));
  return pages;
}

/** The μ-law checks of E13: ffmpeg decodes with exit 0 and empty stderr, ffprobe says pcm_mulaw at 8000. */
export async function checkMulaw(bytes: Buffer, kind: 'raw' | 'wav', channels: number, audioLengthMs: number): Promise<void> {
  const inputArgs = kind === 'raw' ? ['-f', 'mulaw', '-ar', '8000', '-ac', String(channels)] : [];
  expect(await ffmpegVerdict(bytes, kind, inputArgs)).toEqual({ code: 0, stderr: '' });
  const probe = await ffprobe(bytes, { ext: kind, inputArgs });
  expect([probe.codec, probe.sampleRate, probe.channels]).toEqual(['pcm_mulaw', 8000, channels]);
  const data = kind === 'wav' ? bytes.readUInt32LE(54) : bytes.length;
  expect(Math.round((data / channels / 8000) * 1000)).toBe(audioLengthMs);
  if (kind === 'wav') {
    expect(bytes.length).toBe(58 + data + (data & 1));
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    expect([
      bytes.readUInt16LE(20),
      bytes.readUInt16LE(22),
      bytes.readUInt32LE(24),
      bytes.readUInt32LE(28),
      bytes.readUInt16LE(32),
      bytes.readUInt16LE(34),
    ]).toEqual([7, channels, 8000, 8000 * channels, channels, 8]);
    expect(bytes.readUInt32LE(46)).toBe(data / channels);
  }
}
