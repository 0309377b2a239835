// The signature that lets the emulator recognise audio it produced: a 16-tone FSK burst
// (1000..2500 Hz, 20 ms symbols) at the very start of every synthesis, added after effects.
// Layout: 30 ms silence, 4 preamble symbols, 16 id nibbles, 4 CRC-16 nibbles, 50 ms silence.
// Decoding searches the first ~1.2 s for the preamble at 0.5 ms steps, so encoder delay,
// resampling (ffmpeg or linear), downmix, MP3 at 32 kbps, 8 kHz and band-limiting keep it.

const BASE_HZ = 1000;
const STEP_HZ = 100;
const TONES = 16;
const SYMBOL_S = 0.02;
const RAMP_S = 0.002;
const LEAD_S = 0.03;
const TAIL_S = 0.05;
const AMPLITUDE = 0.3;
const PREAMBLE = [1, 14, 4, 11];
const ID_NIBBLES = 16;
const SYMBOLS = PREAMBLE.length + ID_NIBBLES + 4;

/** Duration of the signature lead-in that precedes the speech, in seconds. */
export const SIGNATURE_SECONDS = LEAD_S + SYMBOLS * SYMBOL_S + TAIL_S;

/** Frames of the signature lead-in at a sample rate. */
export function signatureFrames(sampleRate: number): number {
  return Math.round(SIGNATURE_SECONDS * sampleRate);
}

function crc16(bytes: number[]): number {
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function symbolsFor(id: string): number[] {
  if (!/^[0-9a-f]{16}$/.test(id)) throw new Error(`signature id must be 16 hex chars, got ${id}`);
  const nibbles = [...id].map((c) => parseInt(c, 16));
  const bytes: number[] = [];
  for (let i = 0; i < 16; i += 2) bytes.push(nibbles[i]! * 16 + nibbles[i + 1]!);
  const crc = crc16(bytes);
  const crcNibbles = [(crc >> 12) & 15, (crc >> 8) & 15, (crc >> 4) & 15, crc & 15];
  return [...PREAMBLE, ...nibbles, ...crcNibbles];
}

/** The signature lead-in (mono, float, |x| <= 0.3) for an id of 16 hex chars. */
export function signatureSamples(id: string, sampleRate: number): Float32Array {
  const out = new Float32Array(signatureFrames(sampleRate));
  const symbols = symbolsFor(id);
  const lead = Math.round(LEAD_S * sampleRate);
  const ramp = Math.max(1, Math.round(RAMP_S * sampleRate));
  symbols.forEach((sym, i) => {
    const start = lead + Math.round(i * SYMBOL_S * sampleRate);
    const end = lead + Math.round((i + 1) * SYMBOL_S * sampleRate);
    const n = end - start;
    const w = (2 * Math.PI * (BASE_HZ + STEP_HZ * sym)) / sampleRate;
    for (let j = 0; j < n; j++) {
      const edge = Math.min(j, n - 1 - j);
      const env = edge >= ramp ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / ramp);
      out[start + j] = AMPLITUDE * env * Math.sin(w * j);
    }
  });
  return out;
}

/** Prefix sums of x·cos and x·sin for one tone over the first `len` samples. */
function toneSums(x: Float32Array, len: number, sampleRate: number, k: number) {
  const w = (2 * Math.PI * (BASE_HZ + STEP_HZ * k)) / sampleRate;
  const r = new Float64Array(len + 1);
  const m = new Float64Array(len + 1);
  let sr = 0;
  let si = 0;
  // cos/sin(w·n) by rotation, re-anchored every 1024 samples to keep it exact.
  const cw = Math.cos(w);
  const sw = Math.sin(w);
  let c = 1;
  let s = 0;
  for (let n = 0; n < len; n++) {
    if ((n & 1023) === 0) {
      c = Math.cos(w * n);
      s = Math.sin(w * n);
    }
    const v = x[n]!;
    sr += v * c;
    si += v * s;
    r[n + 1] = sr;
    m[n + 1] = si;
    const c2 = c * cw - s * sw;
    s = s * cw + c * sw;
    c = c2;
  }
  return { r, m };
}

/** Prefix sums of x² over the first `len` samples. */
function squareSums(x: Float32Array, len: number): Float64Array {
  const sq = new Float64Array(len + 1);
  let s = 0;
  for (let n = 0; n < len; n++) {
    s += x[n]! * x[n]!;
    sq[n + 1] = s;
  }
  return sq;
}

/**
 * Finds the signature id in mono samples (any rate >= 6 kHz), or null. Demands the preamble,
 * a dominant pure tone in every symbol and a matching CRC-16, so a plain sine, noise, silence
 * or foreign speech never yields an id.
 */
export function readSignature(samples: Float32Array, sampleRate: number): string | null {
  return locateSignature(samples, sampleRate)?.id ?? null;
}

/**
 * Like `readSignature`, with where the signature starts (its 30 ms lead included), in frames of
 * `samples`: searches preamble starts within [from, from + 1.2 s] (anywhere in a long recording).
 */
export function locateSignature(samples: Float32Array, sampleRate: number, from = 0): { id: string; start: number } | null {
  if (sampleRate < 6000 || samples.length === 0) return null;
  const symLen = SYMBOL_S * sampleRate;
  const margin = Math.round(0.003 * sampleRate);
  const win = Math.round(symLen) - 2 * margin;
  const base = Math.max(0, Math.floor(from));
  const searchEnd = Math.min(samples.length - base, Math.round((1.2 + SYMBOLS * SYMBOL_S) * sampleRate));
  const lastStart = searchEnd - Math.ceil(SYMBOLS * symLen);
  if (lastStart < 0) return null;
  const x = base ? samples.subarray(base) : samples;
  const sq = squareSums(x, searchEnd);
  const step = Math.max(1, Math.round(0.0005 * sampleRate));

  // The first preamble tone must dominate its symbol (purity > 0.4, as `symbolAt` demands): found with
  // that one tone's sums, so stretches without it cost 1/16 of the full search.
  const head = toneSums(x, searchEnd, sampleRate, PREAMBLE[0]!);
  const candidates: number[] = [];
  for (let o = 0; o <= lastStart; o += step) {
    const a = o + margin;
    const b = a + win;
    const power = sq[b]! - sq[a]!;
    if (power < win * 1e-6) continue;
    const dr = head.r[b]! - head.r[a]!;
    const di = head.m[b]! - head.m[a]!;
    if ((2 * (dr * dr + di * di)) / (win * power) > 0.4) candidates.push(o);
  }
  if (!candidates.length) return null;
  const re: Float64Array[] = [];
  const im: Float64Array[] = [];
  for (let k = 0; k < TONES; k++) {
    const t = k === PREAMBLE[0] ? head : toneSums(x, searchEnd, sampleRate, k);
    re.push(t.r);
    im.push(t.m);
  }

  // Returns the dominant tone of the symbol window at `at`, or -1 when no pure tone dominates.
  const symbolAt = (at: number): number => {
    const a = at + margin;
    const b = a + win;
    const power = sq[b]! - sq[a]!;
    if (power < win * 1e-6) return -1;
    let best = -1;
    let bestE = 0;
    let second = 0;
    for (let k = 0; k < TONES; k++) {
      const dr = re[k]![b]! - re[k]![a]!;
      const di = im[k]![b]! - im[k]![a]!;
      const e = dr * dr + di * di;
      if (e > bestE) {
        second = bestE;
        bestE = e;
        best = k;
      } else if (e > second) second = e;
    }
    const purity = (2 * bestE) / (win * power);
    return purity > 0.4 && bestE > 4 * second ? best : -1;
  };

  for (const o of candidates) {
    let ok = true;
    for (let i = 0; i < PREAMBLE.length && ok; i++) ok = symbolAt(o + Math.round(i * symLen)) === PREAMBLE[i];
    if (!ok) continue;
    const syms: number[] = [];
    for (let i = PREAMBLE.length; i < SYMBOLS; i++) {
      const s = symbolAt(o + Math.round(i * symLen));
      if (s < 0) break;
      syms.push(s);
    }
    if (syms.length !== SYMBOLS - PREAMBLE.length) continue;
    const id = syms
      .slice(0, ID_NIBBLES)
      .map((v) => v.toString(16))
      .join('');
    const expected = symbolsFor(id).slice(PREAMBLE.length + ID_NIBBLES);
    if (expected.every((v, i) => v === syms[ID_NIBBLES + i])) return { id, start: Math.max(0, base + o - Math.round(LEAD_S * sampleRate)) };
  }
  return null;
}
