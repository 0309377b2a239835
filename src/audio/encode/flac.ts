// A small FLAC encoder: 16-bit, fixed 4096-sample blocks, CONSTANT / FIXED (orders 0-4) /
// VERBATIM subframes, partitioned Rice residuals, left/side stereo, STREAMINFO with MD5.
import { createHash } from 'node:crypto';

export const FLAC_BLOCK = 4096;

class BitWriter {
  buf = new Uint8Array(1 << 16);
  pos = 0; // bytes written
  acc = 0; // pending bits (up to 31)
  n = 0;
  private grow(extra: number) {
    if (this.pos + extra <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.pos + extra));
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
  }
  /** Writes the low `bits` bits of v (bits <= 24). */
  write(v: number, bits: number) {
    if (bits === 0) return;
    this.acc = (this.acc << bits) | (v & ((1 << bits) - 1));
    this.n += bits;
    if (this.n >= 8) {
      this.grow(4);
      while (this.n >= 8) {
        this.n -= 8;
        this.buf[this.pos++] = (this.acc >>> this.n) & 0xff;
      }
      this.acc &= (1 << this.n) - 1;
    }
  }
  writeBig(v: number, bits: number) {
    while (bits > 24) {
      bits -= 24;
      this.write(Math.floor(v / 2 ** bits) & 0xffffff, 24);
    }
    this.write(v, bits);
  }
  unary(q: number) {
    while (q >= 24) {
      this.write(0, 24);
      q -= 24;
    }
    this.write(1, q + 1);
  }
  align() {
    if (this.n) this.write(0, 8 - this.n);
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

const CRC8 = new Uint8Array(256);
const CRC16 = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 0x80 ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
  CRC8[i] = c;
  let d = i << 8;
  for (let k = 0; k < 8; k++) d = d & 0x8000 ? ((d << 1) ^ 0x8005) & 0xffff : (d << 1) & 0xffff;
  CRC16[i] = d;
}
export const crc8 = (b: Uint8Array, from: number, to: number) => {
  let c = 0;
  for (let i = from; i < to; i++) c = CRC8[c ^ b[i]!]!;
  return c;
};
/** One byte into a running FLAC CRC-16. */
export const crc16Update = (crc: number, byte: number) => ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ byte]!;
export const crc16 = (b: Uint8Array, from: number, to: number) => {
  let c = 0;
  for (let i = from; i < to; i++) c = ((c << 8) & 0xffff) ^ CRC16[(c >> 8) ^ b[i]!]!;
  return c;
};

const RATE_CODES: Record<number, number> = { 88200: 1, 176400: 2, 192000: 3, 8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10, 96000: 11 };

/** Residual of the FIXED predictor of an order. */
function fixedResidual(x: Int32Array, order: number, out: Int32Array): void {
  const n = x.length;
  for (let i = order; i < n; i++) {
    switch (order) {
      case 0:
        out[i] = x[i]!;
        break;
      case 1:
        out[i] = x[i]! - x[i - 1]!;
        break;
      case 2:
        out[i] = x[i]! - 2 * x[i - 1]! + x[i - 2]!;
        break;
      case 3:
        out[i] = x[i]! - 3 * x[i - 1]! + 3 * x[i - 2]! - x[i - 3]!;
        break;
      default:
        out[i] = x[i]! - 4 * x[i - 1]! + 6 * x[i - 2]! - 4 * x[i - 3]! + x[i - 4]!;
    }
  }
}

interface RicePlan {
  order: number; // partition order
  params: number[];
  bits: number;
}

function riceCost(sum: number, cnt: number): { k: number; bits: number } {
  let k = 0;
  while (k < 30 && cnt * 2 ** (k + 1) < sum) k++;
  return { k, bits: 5 + cnt * (k + 1) + Math.floor(sum / 2 ** k) };
}

/**
 * Best partition order and Rice parameters for residuals res[warm..n): sums of the zig-zagged
 * residuals are taken once at the finest partition order and merged upward.
 */
function planRice(res: Int32Array, warm: number): RicePlan {
  const n = res.length;
  let maxPo = 0;
  while (maxPo < 8 && n % (1 << (maxPo + 1)) === 0 && n >> (maxPo + 1) > warm) maxPo++;
  let sums = new Float64Array(1 << maxPo);
  const size = n >> maxPo;
  for (let p = 0; p < sums.length; p++) {
    let sum = 0;
    for (let i = p === 0 ? warm : p * size, to = (p + 1) * size; i < to; i++) {
      const r = res[i]!;
      sum += r >= 0 ? 2 * r : -2 * r - 1;
    }
    sums[p] = sum;
  }
  let best: RicePlan | null = null;
  for (let po = maxPo; po >= 0; po--) {
    if (po < maxPo) {
      const up = new Float64Array(sums.length / 2);
      for (let p = 0; p < up.length; p++) up[p] = sums[2 * p]! + sums[2 * p + 1]!;
      sums = up;
    }
    const psize = n >> po;
    const params: number[] = [];
    let bits = 0;
    for (let p = 0; p < sums.length; p++) {
      const c = riceCost(sums[p]!, p === 0 ? psize - warm : psize);
      params.push(c.k);
      bits += c.bits;
    }
    if (!best || bits < best.bits) best = { order: po, params, bits };
  }
  return best!;
}

function writeSubframe(w: BitWriter, x: Int32Array, bps: number, scratch: Int32Array): void {
  const n = x.length;
  let constant = true;
  for (let i = 1; i < n && constant; i++) constant = x[i] === x[0];
  if (constant) {
    w.write(0, 8); // pad 0, type CONSTANT, no wasted bits
    w.write(x[0]!, bps);
    return;
  }
  let bestOrder = -1;
  let bestPlan: RicePlan | null = null;
  for (let order = 0; order <= 4 && order < n; order++) {
    fixedResidual(x, order, scratch);
    const plan = planRice(scratch.subarray(0, n), order);
    const bits = plan.bits + order * bps;
    if (!bestPlan || bits < bestPlan.bits + bestOrder * bps) {
      bestOrder = order;
      bestPlan = plan;
    }
  }
  if (!bestPlan || bestPlan.bits + bestOrder * bps >= n * bps) {
    w.write(0b00000010, 8); // VERBATIM
    for (let i = 0; i < n; i++) w.write(x[i]!, bps);
    return;
  }
  fixedResidual(x, bestOrder, scratch);
  w.write((0b001000 | bestOrder) << 1, 8); // FIXED, order
  for (let i = 0; i < bestOrder; i++) w.write(x[i]!, bps);
  const rice2 = bestPlan.params.some((k) => k > 14);
  w.write(rice2 ? 1 : 0, 2);
  w.write(bestPlan.order, 4);
  const parts = 1 << bestPlan.order;
  const size = n / parts;
  for (let p = 0; p < parts; p++) {
    const k = bestPlan.params[p]!;
    w.write(k, rice2 ? 5 : 4);
    const from = p === 0 ? bestOrder : p * size;
    for (let i = from; i < (p + 1) * size; i++) {
      const r = scratch[i]!;
      const u = r >= 0 ? 2 * r : -2 * r - 1;
      w.unary(Math.floor(u / 2 ** k));
      if (k) w.writeBig(u % 2 ** k, k);
    }
  }
}

function utf8Number(v: number): number[] {
  if (v < 0x80) return [v];
  const bytes: number[] = [];
  let lead = 0x80;
  let max = 0x3f;
  while (v > max) {
    bytes.unshift(0x80 | (v & 0x3f));
    v = Math.floor(v / 64);
    lead = (lead >> 1) | 0x80;
    max >>= 1;
  }
  bytes.unshift(lead | v);
  return bytes;
}

/** One FLAC frame for `frames` interleaved samples (frames <= FLAC_BLOCK). */
export function encodeFlacFrame(pcm: Int16Array, channels: 1 | 2, sampleRate: number, frameNumber: number): Buffer {
  const n = pcm.length / channels;
  const w = new BitWriter();
  w.write(0xfff8, 16);
  const bsCode = n === FLAC_BLOCK ? 12 : 7;
  w.write(bsCode, 4);
  w.write(RATE_CODES[sampleRate] ?? 0, 4);
  w.write(channels === 2 ? 8 : 0, 4); // 8: left/side
  w.write(0b100, 3); // 16 bits per sample
  w.write(0, 1);
  for (const b of utf8Number(frameNumber)) w.write(b, 8);
  if (bsCode === 7) w.write(n - 1, 16);
  w.write(crc8(w.bytes(), 0, w.pos), 8);
  const scratch = new Int32Array(n);
  if (channels === 1) {
    writeSubframe(w, Int32Array.from(pcm), 16, scratch);
  } else {
    const left = new Int32Array(n);
    const side = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      left[i] = pcm[2 * i]!;
      side[i] = pcm[2 * i]! - pcm[2 * i + 1]!;
    }
    writeSubframe(w, left, 16, scratch);
    writeSubframe(w, side, 17, scratch);
  }
  w.align();
  const crc = crc16(w.bytes(), 0, w.pos);
  w.write(crc, 16);
  return Buffer.from(w.bytes());
}

/** `fLaC` + STREAMINFO (last metadata block). Total samples 0 and MD5 zero mean "unknown". */
export function flacHeader(sampleRate: number, channels: number, totalFrames: number, md5: Buffer | null): Buffer {
  const w = new BitWriter();
  w.write(0x664c, 16);
  w.write(0x6143, 16); // "fLaC"
  w.write(0x80, 8); // last metadata block, STREAMINFO
  w.write(34, 24);
  w.write(FLAC_BLOCK, 16);
  w.write(FLAC_BLOCK, 16);
  w.write(0, 24); // min frame size unknown
  w.write(0, 24); // max frame size unknown
  w.write(sampleRate, 20);
  w.write(channels - 1, 3);
  w.write(15, 5);
  w.writeBig(totalFrames, 36);
  const out = Buffer.concat([Buffer.from(w.bytes()), md5 ?? Buffer.alloc(16)]);
  return out;
}

export interface FlacWriter {
  /** The FLAC frames completed by these samples (each a whole frame). */
  push(pcm: Int16Array): Buffer[];
  end(): Buffer[];
  /** Frames seen and MD5 of the samples (after end). */
  totals(): { frames: number; md5: Buffer };
}

/** Stateful FLAC framing: buffers samples into 4096-frame blocks. */
export function flacWriter(sampleRate: number, channels: 1 | 2): FlacWriter {
  const hash = createHash('md5');
  const pending = new Int16Array(FLAC_BLOCK * channels);
  let fill = 0;
  let frameNo = 0;
  let frames = 0;
  let md5: Buffer | null = null;
  return {
    push(pcm) {
      hash.update(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
      frames += pcm.length / channels;
      const out: Buffer[] = [];
      let at = 0;
      while (at < pcm.length) {
        const take = Math.min(pending.length - fill, pcm.length - at);
        pending.set(pcm.subarray(at, at + take), fill);
        fill += take;
        at += take;
        if (fill === pending.length) {
          out.push(encodeFlacFrame(pending, channels, sampleRate, frameNo++));
          fill = 0;
        }
      }
      return out;
    },
    end() {
      md5 = hash.digest();
      if (!fill) return [];
      const last = encodeFlacFrame(pending.slice(0, fill), channels, sampleRate, frameNo++);
      fill = 0;
      return [last];
    },
    totals: () => ({ frames, md5: md5 ?? Buffer.alloc(16) }),
  };
}
