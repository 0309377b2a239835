/**
 * The user's microphone (48 kHz mono PCM16, in frames of any length) brought down to the 16 kHz the
 * conversation's recognition and turn-taking read: a low-pass (windowed sinc, cut at 7 kHz, well
 * below the 8 kHz limit of the lower rate) then every third sample. The filter's history carries from
 * one frame to the next, so the output does not depend on how the input was framed.
 */
export const TRACK_RATE = 48_000;
export const RECOGNITION_RATE = 16_000;
const FACTOR = TRACK_RATE / RECOGNITION_RATE;
const TAPS = 63;
const CUTOFF_HZ = 7000;

/** Blackman-windowed sinc, normalised to unit gain at DC. */
const KERNEL: Float32Array = (() => {
  const k = new Float32Array(TAPS);
  const fc = CUTOFF_HZ / TRACK_RATE;
  const mid = (TAPS - 1) / 2;
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const x = i - mid;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (TAPS - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (TAPS - 1));
    k[i] = sinc * w;
    sum += k[i]!;
  }
  for (let i = 0; i < TAPS; i++) k[i]! /= sum;
  return k;
})();

export class Downsampler {
  /** The last TAPS - 1 input samples, then the new frame (reused while frames fit). */
  private buf = new Float32Array(TAPS - 1 + 960);
  /** Where the next output sample falls in the next frame (0..FACTOR-1). */
  private phase = 0;

  /** The 16 kHz samples this 48 kHz frame completes. */
  push(frame: Int16Array): Int16Array {
    const keep = TAPS - 1;
    if (this.buf.length < keep + frame.length) {
      const grown = new Float32Array(keep + frame.length);
      grown.set(this.buf.subarray(0, keep));
      this.buf = grown;
    }
    const buf = this.buf;
    for (let i = 0; i < frame.length; i++) buf[keep + i] = frame[i]!;
    const count = frame.length > this.phase ? Math.ceil((frame.length - this.phase) / FACTOR) : 0;
    const out = new Int16Array(count);
    for (let n = 0; n < count; n++) {
      // Output n is centred on input sample (phase + n * FACTOR) of this frame, delayed by the filter's half length.
      const end = this.phase + n * FACTOR + keep;
      let acc = 0;
      for (let t = 0; t < TAPS; t++) acc += KERNEL[t]! * buf[end - t]!;
      out[n] = Math.max(-32768, Math.min(32767, Math.round(acc)));
    }
    this.phase = this.phase + count * FACTOR - frame.length;
    // The last TAPS - 1 samples become the next frame's history.
    buf.copyWithin(0, frame.length, frame.length + keep);
    return out;
  }
}
