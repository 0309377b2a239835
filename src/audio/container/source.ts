/**
 * What the container readers share: random access to the bytes (a buffer, or a file read where its
 * headers are), what a reader answers, its refusal, and the small byte helpers.
 */

export type Container = 'wav' | 'aiff' | 'flac' | 'mp3' | 'aac' | 'm4a' | 'ogg';

/** Random access to bytes; `bytes` may return fewer than asked at the end. */
export interface ByteSource {
  readonly size: number;
  bytes(offset: number, length: number): Buffer;
}

export function bufferSource(b: Buffer): ByteSource {
  return { size: b.length, bytes: (offset, length) => b.subarray(Math.max(0, offset), Math.max(0, Math.min(b.length, offset + length))) };
}

export interface ContainerInfo {
  container: Container;
  /** Codec inside the container (`pcm`, `mp3`, `aac`, `alac`, `opus`, `vorbis`, `flac`, …). */
  codec: string;
  /** Seconds, from the container's metadata or its frame headers. */
  duration: number;
  sampleRate: number;
  channels: number;
}

/** Why bytes are refused: not a listed container at all, or a listed one that cannot be read. */
export class ContainerError extends Error {
  constructor(
    readonly kind: 'unsupported' | 'undecodable',
    message: string,
  ) {
    super(message);
    this.name = 'ContainerError';
  }
}

export const undecodable = (what: string) => new ContainerError('undecodable', what);
export const ascii = (b: Buffer, at: number, s: string) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

/** Length of an ID3v2 tag at the start (0 when none). */
export function id3Length(src: ByteSource): number {
  const h = src.bytes(0, 10);
  if (!ascii(h, 0, 'ID3') || h.length < 10) return 0;
  const size = ((h[6]! & 0x7f) << 21) | ((h[7]! & 0x7f) << 14) | ((h[8]! & 0x7f) << 7) | (h[9]! & 0x7f);
  return 10 + size + (h[5]! & 0x10 ? 10 : 0);
}

export const isAdtsSync = (b: Buffer, at = 0) => b.length >= at + 2 && b[at] === 0xff && (b[at + 1]! & 0xf6) === 0xf0;
export const isMp3Sync = (b: Buffer, at = 0) => b.length >= at + 2 && b[at] === 0xff && (b[at + 1]! & 0xe0) === 0xe0 && ((b[at + 1]! >> 1) & 3) === 1;

/** A rate and channel count a real file can have; anything else is a broken header. */
export function checkShape(what: string, sampleRate: number, channels: number): void {
  if (!(sampleRate >= 1000 && sampleRate <= 768000) || !(channels >= 1 && channels <= 64))
    throw undecodable(`${what} header declares ${channels} channels at ${sampleRate} Hz`);
}
