/**
 * A minimal zip reader: the central directory, stored and deflated entries, no encryption, no zip64.
 * Enough for the text archives users upload (async synthesis inputs). `maxBytes` bounds the total
 * uncompressed size, so a small hostile archive cannot blow up in memory.
 */
import { inflateRawSync } from 'node:zlib';

export class ZipError extends Error {}

export interface ZipEntry {
  name: string;
  data: Buffer;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

function endOfDirectory(b: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535.
  for (let at = b.length - 22; at >= Math.max(0, b.length - 22 - 65535); at--) if (b.readUInt32LE(at) === EOCD) return at;
  throw new ZipError('no end of central directory record (not a zip archive, or cut short)');
}

export function readZip(b: Buffer, maxBytes: number): ZipEntry[] {
  if (b.length < 22) throw new ZipError('too short to be a zip archive');
  const eocd = endOfDirectory(b);
  const count = b.readUInt16LE(eocd + 10);
  let at = b.readUInt32LE(eocd + 16);
  const out: ZipEntry[] = [];
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > b.length || b.readUInt32LE(at) !== CENTRAL) throw new ZipError('broken central directory');
    const flags = b.readUInt16LE(at + 8);
    const method = b.readUInt16LE(at + 10);
    const compressed = b.readUInt32LE(at + 20);
    const size = b.readUInt32LE(at + 24);
    const nameLen = b.readUInt16LE(at + 28);
    const extraLen = b.readUInt16LE(at + 30);
    const commentLen = b.readUInt16LE(at + 32);
    const local = b.readUInt32LE(at + 42);
    const name = b.toString(flags & 0x800 ? 'utf8' : 'latin1', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (name.endsWith('/')) continue; // a folder
    if (flags & 1) throw new ZipError(`${name} is encrypted`);
    if (local + 30 > b.length || b.readUInt32LE(local) !== LOCAL) throw new ZipError(`broken local header of ${name}`);
    const start = local + 30 + b.readUInt16LE(local + 26) + b.readUInt16LE(local + 28);
    if (start + compressed > b.length) throw new ZipError(`${name} is cut short`);
    const raw = b.subarray(start, start + compressed);
    const left = maxBytes - total;
    if (size > left) throw new ZipError(`the archive holds more than ${maxBytes} bytes uncompressed`);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) {
      try {
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, left) });
      } catch (err) {
        throw new ZipError(`${name} cannot be inflated (${(err as Error).message})`);
      }
    } else throw new ZipError(`${name} uses compression method ${method}; only stored and deflated entries are read`);
    total += data.length;
    out.push({ name, data });
  }
  return out;
}
