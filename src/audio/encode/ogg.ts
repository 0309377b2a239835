/**
 * Ogg pages (RFC 3533) as an Ogg/Opus stream needs them (RFC 7845): the page header, its lacing
 * table and its CRC. A page here holds whole packets only, so no packet is ever continued on the
 * next page; the caller decides which packets share a page and what granule each page carries.
 */

/** Header type flags of a page. */
export const OGG_BOS = 0x02;
export const OGG_EOS = 0x04;

/** The Ogg CRC-32: polynomial 0x04C11DB7, initial value 0, no reflection, no final XOR. */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    t[i] = r >>> 0;
  }
  return t;
})();

export function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc;
}

export interface OggPage {
  serial: number;
  sequence: number;
  /** Samples at 48 kHz decoded once every packet completed on this page is (RFC 7845 section 4). */
  granule: bigint;
  flags: number;
  packets: Buffer[];
}

/** One page, CRC included. Every packet ends on this page (lacing values close each one). */
export function oggPage(page: OggPage): Buffer {
  const lacing: number[] = [];
  let body = 0;
  for (const p of page.packets) {
    for (let n = p.length; ; n -= 255) {
      lacing.push(Math.min(n, 255));
      if (n < 255) break;
    }
    body += p.length;
  }
  if (lacing.length > 255) throw new RangeError(`an Ogg page holds at most 255 lacing values (got ${lacing.length})`);
  const out = Buffer.alloc(27 + lacing.length + body);
  out.write('OggS', 0, 'ascii');
  out[4] = 0; // stream structure version
  out[5] = page.flags;
  out.writeBigInt64LE(page.granule, 6);
  out.writeUInt32LE(page.serial >>> 0, 14);
  out.writeUInt32LE(page.sequence, 18);
  // CRC (22..25) stays zero while it is computed.
  out[26] = lacing.length;
  Buffer.from(lacing).copy(out, 27);
  let at = 27 + lacing.length;
  for (const p of page.packets) {
    p.copy(out, at);
    at += p.length;
  }
  out.writeUInt32LE(oggCrc(out), 22);
  return out;
}
