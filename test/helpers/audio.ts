// Audio pieces several test folders share: a PCM16 mono WAV container and an in-place FFT.

/**
 * A 16-bit mono PCM WAV: the 44-byte canonical header for `dataBytes` of data, then that many zero
 * bytes (silence) for the caller to fill (sample i at byte 44 + 2i) or to break on purpose.
 */
export function pcm16Wav(dataBytes: number, sampleRate = 16000): Buffer {
  const b = Buffer.alloc(44 + dataBytes);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + dataBytes, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(sampleRate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(dataBytes, 40);
  return b;
}

/** In-place radix-2 FFT; the length must be a power of two. */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(ang * k);
        const wi = Math.sin(ang * k);
        const a = i + k;
        const b = a + len / 2;
        const xr = re[b]! * wr - im[b]! * wi;
        const xi = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - xr;
        im[b] = im[a]! - xi;
        re[a]! += xr;
        im[a]! += xi;
      }
    }
  }
}

/** Interleaved s16le -> Int16Array (copy). */
export function samplesOf(pcm: Buffer): Int16Array {
  const out = new Int16Array(pcm.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(i * 2);
  return out;
}

/** 16-bit samples as float in [-1, 1): the first channel of `channels` interleaved. */
export function toFloat(pcm: Int16Array, channels = 1): Float32Array {
  const n = pcm.length / channels;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = pcm[i * channels]! / 32768;
  return out;
}

/** RMS of the samples in [from, to), in [0, 1] (16-bit samples are scaled by 1/32768). */
export function rms(x: Float32Array | Int16Array, from = 0, to = x.length): number {
  const scale = x instanceof Int16Array ? 1 / 32768 : 1;
  const a = Math.max(0, Math.floor(from));
  const b = Math.min(x.length, Math.floor(to));
  let s = 0;
  for (let i = a; i < b; i++) s += (x[i]! * scale) ** 2;
  return b > a ? Math.sqrt(s / (b - a)) : 0;
}

/** Magnitude spectrum of the whole signal (Hann window, zero-padded to a power of two >= `size`): for peaks. */
export function spectrum(x: Float32Array, size = 1 << 15): Float64Array {
  let n = 1;
  while (n < Math.max(size, x.length)) n <<= 1;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let i = 0; i < x.length; i++) re[i] = x[i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (x.length - 1 || 1)));
  fft(re, im);
  const mag = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) mag[i] = Math.hypot(re[i]!, im[i]!);
  return mag;
}

/** Average magnitude spectrum of 16-bit samples (1024-point frames, Hann window), normalised to unit length: a timbre to compare with `distance`. */
export function spectralShape(s: Int16Array, from = 0): Float64Array {
  const N = 1024;
  const acc = new Float64Array(N / 2);
  const re = new Float64Array(N);
  const im = new Float64Array(N);
  for (let at = from; at + N <= s.length; at += N) {
    for (let i = 0; i < N; i++) {
      re[i] = (s[at + i]! / 32768) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (N - 1)));
      im[i] = 0;
    }
    fft(re, im);
    for (let k = 0; k < N / 2; k++) acc[k]! += Math.hypot(re[k]!, im[k]!);
  }
  const norm = Math.hypot(...acc) || 1;
  for (let k = 0; k < acc.length; k++) acc[k]! /= norm;
  return acc;
}

export function distance(a: Float64Array, b: Float64Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += (a[i]! - b[i]!) ** 2;
  return Math.sqrt(d);
}
