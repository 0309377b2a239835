/**
 * A minimal USTAR archive writer: regular files only, names up to 100 bytes (or 255 with a prefix).
 * Enough for the archives the emulator hands out (async synthesis results); `tar -tf` reads them.
 * `tarStream` gives the bytes piece by piece, with members read from a source as they are written
 * (an archive of hours of audio is never held whole).
 */

/** A member whose bytes come from a source (a file on disk): its size is known before they are read. */
export interface TarStreamEntry {
  name: string;
  size: number;
  mtimeSec: number;
  data: Buffer | (() => AsyncIterable<Buffer>);
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL terminator, as USTAR numeric fields are.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  const cut = name.lastIndexOf('/', 155);
  const prefix = cut > 0 ? name.slice(0, cut) : '';
  const base = cut > 0 ? name.slice(cut + 1) : name;
  if (!prefix || Buffer.byteLength(prefix) > 155 || Buffer.byteLength(base) > 100) throw new Error(`tar entry name too long: ${name}`);
  return { prefix, base };
}

/** A member name that an extractor would write outside its target folder is a bug of the caller: never written. */
function assertConfined(name: string): void {
  if (name.startsWith('/') || name.split(/[/\\]/).some((s) => s === '..')) throw new Error(`tar entry name leaves its folder: ${name}`);
}

function header(entry: { name: string; size: number; mtimeSec: number }): Buffer {
  assertConfined(entry.name);
  const h = Buffer.alloc(BLOCK);
  const { prefix, base } = splitName(entry.name);
  h.write(base, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(entry.size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(entry.mtimeSec)), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii'); // checksum counts as spaces while summing
  h.write('0', 156, 'ascii'); // regular file
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

/** The archive of `entries` as chunks: each entry's header and data padded to 512 bytes, then two zero blocks; a member shorter or longer than its size throws. */
export async function* tarStream(entries: Iterable<TarStreamEntry>): AsyncGenerator<Buffer> {
  for (const e of entries) {
    yield header(e);
    let got = 0;
    if (Buffer.isBuffer(e.data)) {
      got = e.data.length;
      yield e.data;
    } else {
      for await (const chunk of e.data()) {
        got += chunk.length;
        if (got > e.size) throw new Error(`tar member ${e.name} is longer than its ${e.size} bytes`);
        yield chunk;
      }
    }
    if (got !== e.size) throw new Error(`tar member ${e.name} holds ${got} bytes, not ${e.size}`);
    const pad = (BLOCK - (e.size % BLOCK)) % BLOCK;
    if (pad) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(BLOCK * 2);
}
