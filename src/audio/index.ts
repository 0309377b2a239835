/**
 * Audio engine of the emulator: pure functions over sample buffers (no HTTP, no state).
 *
 * Synthesis
 * - `signatureIdFor(input)`            deterministic id (16 hex chars) embedded in the audio.
 * - `synthesize(input)`                whole PCM + timeline + signature id.
 * - `synthesizeDialogue(input)`        podcast: turns in order, per-turn spans in `turns`.
 * - `synthesizeStream(input, {signal})` / `synthesizeDialogueStream(...)`: async iterable of
 *                                      Int16 PCM blocks produced as rendering advances; the
 *                                      timeline/duration are known up front; `done()` at the end.
 * - `loadSpeechEngine()`               loads the speech voice engine (`engine: 'speech'` in the settings:
 *                                      English spoken by Flite, an optional package); done at start.
 * - `synthesizeStreamSliced(input, {signal, growing})` the same stream, planned in slices that yield to
 *                                      the event loop (for servers: a long text plans for ~20 ms);
 *                                      `growing`: the speech engine's stream starts at once (the
 *                                      signature) and grows sentence by sentence, its duration and
 *                                      timeline final at `done()`.
 *                                      `synthesizeDialogueStreamSliced(...)` the same for a dialogue.
 * Encoding
 * - `encodeAudio(format, source, opts)` whole file `{ bytes, meta }` (source: a SynthResult,
 *                                      any `{pcm, sampleRate, channels}`, or a PCM block stream).
 * - `encodeAudioStream(format, source, opts)` async iterable of Buffers (MP3: whole frames, each
 *                                      chunk starts on a frame sync; PCM/WAV/μ-law: whole sample frames;
 *                                      Opus: whole Ogg pages, headers with the first audio page;
 *                                      FLAC: whole frames, first chunk holds fLaC + STREAMINFO),
 *                                      then `meta()`. Concatenation equals the whole file byte for
 *                                      byte for MP3, PCM, μ-law and Opus; a streamed WAV has RIFF/data sizes
 *                                      0xFFFFFFFF, a streamed FLAC has total samples and MD5 zero in
 *                                      STREAMINFO (as real streaming encoders do); otherwise equal.
 * - `mp3Bitrate(sampleRate, requested)` the legal CBR bitrate used for a request;
 *   `reportedBitrate(format, …)` the bitrate any format reports.
 * - `opusEncoderProblem()`             null when Opus can be encoded, else why not.
 * Reading audio
 * - `probeAudio(bytes, hint?)`         format, rate, channels, duration, or throws AudioProbeError.
 * - `decodeToMono(bytes, hint?, max?)` Float32 mono samples of WAV/MP3/FLAC/raw PCM16: the first
 *                                      `max` frames at most (10 min at 48 kHz), decoded in slices
 *                                      that yield (decode-slices.ts `monoSlices` to reduce a whole file).
 * - `readSignature(samples, rate)`     the embedded signature id, or null.
 * - `speechActivity(samples, rate)`    non-silent stretches by an energy detector.
 */
export type * from './types.js';
export { signatureIdFor } from './signature-id.js';
export {
  loadSpeechEngine,
  synthesize,
  synthesizeDialogue,
  synthesizeStream,
  synthesizeStreamSliced,
  synthesizeDialogueStream,
  synthesizeDialogueStreamSliced,
  type StreamOptions,
} from './synth.js';
export { encodeAudio, encodeAudioStream, mp3Bitrate, opusEncoderProblem, OPUS_INPUT_RATES, reportedBitrate } from './encode/index.js';
export { probeAudio, decodeToMono, AudioProbeError, type AudioProbeErrorCode } from './probe.js';
export { readSignature } from './marker.js';
export { speechActivity, type ActivityOptions } from './activity.js';
export { TAG_NAMES, type TagName } from './text/tokens.js';
export { mulawByte } from './encode/mulaw.js';
