/**
 * Every chunk an audio encoder makes, sent as frames of synthesized audio in one call: the loop over the
 * encoder, what each chunk carries for the pace, `split_frame`, and each frame through the guard's
 * `sendAudio` (pace, audio faults, count, cut, journal, write) live here, so a sender hands its encoder
 * over once instead of calling into core for every chunk. The sender's only part per chunk is its
 * `render`, when its frames wrap the audio (a JSON event); a transport that sends the bytes as they are
 * needs none.
 */
import { AUDIO_CHUNK, type FrameKind } from './frames.js';
import type { AudioFrame, AudioMade, AudioShaping } from './shaping.js';

/** How a sender's encoded chunks become frames. */
export interface EncodedFrames<F> {
  /**
   * How much new audio each chunk carries (what the pace counts): the audio `made` so far when the
   * chunk came out of the encoder, or, for a constant bit rate, the chunk's size at `bitrate`.
   */
  readonly made?: AudioMade;
  readonly bitrate?: number;
  /**
   * The frame that carries a chunk (default: the chunk's bytes). `madeMs`: the audio made when it came
   * out of the encoder; `last`: it is the encoder's last chunk (known only with `holdOne`).
   */
  readonly render?: (audio: Buffer, damage: { oddHex: boolean; inflate: number }, madeMs: number, last: boolean) => F;
  /** Each chunk waits until the next one exists (or the encoder ended), so its frame knows whether it is the last. */
  readonly holdOne?: boolean;
  /** What each frame is (default: an audio chunk, not the answer's last). */
  readonly kind?: FrameKind;
}

/** Where the frames go: the guard's `sendAudio`, or a socket wire's (which keeps its frames in order behind a commit). */
export type AudioSend<F> = (frame: AudioFrame<F>, kind: FrameKind) => boolean | Promise<boolean>;

const AS_IS = (audio: Buffer) => audio;

/**
 * Sends every chunk of `chunks` (after the shaping's `split_frame`) as one audio frame through `send`.
 * True once the encoder ended with every frame sent; false as soon as the stream ended (the client left,
 * a cut, shutdown): the caller stops.
 */
export async function sendEncoded<F>(
  shaping: Pick<AudioShaping, 'encodedChunks'>,
  chunks: AsyncIterable<Buffer>,
  how: EncodedFrames<F>,
  send: AudioSend<F>,
): Promise<boolean> {
  const { made, bitrate, holdOne } = how;
  const render = (how.render ?? AS_IS) as NonNullable<EncodedFrames<F>['render']>;
  const kind = how.kind ?? AUDIO_CHUNK;
  const frameOf = (bytes: Buffer, madeMs: number, last: boolean): AudioFrame<F> => ({
    audio: bytes,
    ms: made ? made.newMs(madeMs) : bitrate ? (bytes.length * 8000) / bitrate : 0,
    render: (audio, damage) => render(audio, damage, madeMs, last),
  });
  let held: { bytes: Buffer; madeMs: number } | null = null;
  for await (const bytes of shaping.encodedChunks(chunks)) {
    const madeMs = made ? made.ms : 0;
    if (!holdOne) {
      if (!(await send(frameOf(bytes, madeMs, false), kind))) return false;
      continue;
    }
    if (held && !(await send(frameOf(held.bytes, held.madeMs, false), kind))) return false;
    held = { bytes, madeMs };
  }
  if (held && !(await send(frameOf(held.bytes, held.madeMs, true), kind))) return false;
  return true;
}
