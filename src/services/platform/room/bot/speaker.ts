/**
 * The bot's voice: a text synthesized with the bot's voice at the track's 48 kHz (the same synthesis
 * as every other speech the emulator makes, so it carries the emulator's signature and recognition and
 * `hear` find its words), cut into 20 ms frames and sent through the stream guard. The guard paces
 * the frames in real time (wall time: the track is a live medium, `rtf` 1 unless a fault says
 * otherwise) and applies the audio fault fields: `ttfa_ms`, `rtf`, `jitter_ms`, `stall_ms` at
 * `stall_at_ms`, `gap_ms` at `gap_at_ms` (silence in the PCM), `corrupt_bytes` (bytes of the PCM
 * flipped), `duplicate_chunk` (a frame sent twice) and `cut_after_chunks` (the room drops after that
 * many frames). Fields that only exist for encoded or hex audio (`split_frame`, `hex_odd`,
 * `drop_final`, `extra_info_mismatch`) have no meaning for raw frames and are not read.
 */
import { synthesizeStream, type SynthStream } from '../../../../audio/index.js';
import type { Account } from '../../../../core/state/accounts.js';
import type { Emulator } from '../../../../core/emulator.js';
import type { FaultDirective } from '../../../../core/faults/faults.js';
import { AUDIO_CHUNK, FINAL_AUDIO_CHUNK, StreamGuard } from '../../../../core/stream/guard.js';
import { PACE_FIELDS, REALISTIC_PACE, type StreamShape } from '../../../../core/stream/shaping.js';
import type { JournalEntry } from '../../../../core/journal/journal.js';
import { replySynthInput } from '../../shared/conversation-turn.js';
import { TRACK_RATE } from './downsample.js';

/** One frame of the bot's track: 20 ms at 48 kHz mono. */
const FRAME_MS = 20;
const FRAME_SAMPLES = (TRACK_RATE * FRAME_MS) / 1000;

/** The audio fault fields the bot's track applies (the pace and the damage a raw PCM frame can carry). */
const TRACK_AUDIO_FAULTS = ['duplicate_chunk', 'gap_ms', 'gap_at_ms', 'corrupt_bytes'] as const;
/**
 * The shape of the bot's track: real time (`rtf` 1), under `--latency realistic` that profile's first
 * audio delay and jitter (not its rate: a live track never runs ahead), then the account's standing
 * stream faults, then the room connection's fault.
 */
export function trackShape(emu: Emulator, account: Account, fault: FaultDirective | undefined): StreamShape {
  const shape: Record<string, number> = { rtf: 1 };
  if (emu.config.latency === 'realistic') Object.assign(shape, { ttfa_ms: REALISTIC_PACE.ttfa_ms, jitter_ms: REALISTIC_PACE.jitter_ms });
  for (const given of [account.streamFaults, fault]) {
    for (const field of [...PACE_FIELDS, ...TRACK_AUDIO_FAULTS]) {
      const value = given?.[field];
      if (value !== undefined) shape[field] = value;
    }
  }
  return shape as StreamShape;
}

export interface SpeakHooks {
  /** Where the bot stops at once (barge-in): the frame waiting for its time is not sent. */
  stop: AbortSignal;
  /** The first frame left. */
  first?(): void;
  /** A frame left; `ms` of audio sent so far in this utterance. */
  progress?(ms: number): void;
  /** Wall time (performance.now) the journal's time to first audio counts from: the end of the user's utterance (default: now). */
  from?: number;
}

export interface Spoken {
  /** `done`: said to the end; `stopped`: cut by `stop`; `ended`: the track is gone (room closed or dropped). */
  outcome: 'done' | 'stopped' | 'ended';
  /** Milliseconds of audio sent. */
  ms: number;
}

export interface SpeakerOptions {
  entry: JournalEntry | null;
  shape: StreamShape;
  cutAfterChunks?: number;
  /** Aborts when the room ends: a paced wait ends at once and nothing more is sent. */
  gone: AbortSignal;
  seed: string;
  /** Writes a frame to the room. */
  send(frame: Int16Array): boolean;
  /** `cut_after_chunks` dropped the room. */
  dropped(): void;
}

export class Speaker {
  private readonly guard: StreamGuard<Int16Array>;
  /** Told of each frame written to the room (a frame sent twice by `duplicate_chunk` counts once per write). */
  private written: () => void = () => undefined;

  constructor(
    private readonly emu: Emulator,
    private readonly opts: SpeakerOptions,
  ) {
    this.guard = new StreamGuard<Int16Array>(
      {
        write: (frame) => {
          if (!opts.send(frame)) return false;
          this.written();
          return true;
        },
        cut: () => opts.dropped(),
        // The emulator shuts down: the room ends with it; the bot only stops.
        endForShutdown: () => undefined,
      },
      { entry: opts.entry, cutAfterChunks: opts.cutAfterChunks, closing: emu.closing, gone: opts.gone, shape: opts.shape, seed: opts.seed },
    );
  }

  /** The synthesis of `text` with `voiceId` at the track's rate (its summary is known before any sample). */
  synthesis(text: string, voiceId: string, signal: AbortSignal): SynthStream {
    return synthesizeStream(replySynthInput(text, { voice_id: voiceId }, this.emu.config.voiceEngine, TRACK_RATE), { signal });
  }

  /** The user cut the bot short: the journal times how long audio went on after it. */
  cancelled(): void {
    this.guard.cancelled();
  }

  /** Sends `synth` as 20 ms frames, paced; the last frame is padded with silence to a whole frame. */
  async speak(synth: SynthStream, hooks: SpeakHooks): Promise<Spoken> {
    const { stop } = hooks;
    let ms = 0;
    if (this.guard.ended || this.opts.gone.aborted) return { outcome: 'ended', ms };
    // Counted as frames are written: a frame that left just before a barge-in counts as said.
    this.written = () => {
      ms += FRAME_MS;
      if (ms === FRAME_MS) hooks.first?.();
      hooks.progress?.(ms);
    };
    // A new answer on the track: `ttfa_ms` counts from now.
    this.guard.beginAnswer(true, hooks.from);
    let held: Int16Array | null = null;
    let filling = new Int16Array(FRAME_SAMPLES);
    let filled = 0;
    const send = async (frame: Int16Array, final: boolean): Promise<Spoken['outcome'] | null> => {
      const audio = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
      const render = (bytes: Buffer) => (bytes === audio ? frame : new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
      const ok = await this.guard.sendAudio({ audio, ms: FRAME_MS, render }, final ? FINAL_AUDIO_CHUNK : AUDIO_CHUNK, stop);
      if (stop.aborted) return 'stopped';
      if (!ok) return 'ended';
      return null;
    };
    try {
      for await (const block of this.guard.audioSource(synth, TRACK_RATE, 1)) {
        for (let at = 0; at < block.length;) {
          const n = Math.min(FRAME_SAMPLES - filled, block.length - at);
          filling.set(block.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled < FRAME_SAMPLES) continue;
          // One frame is held back: the last one of the utterance is sent as its final chunk.
          if (held) {
            const outcome = await send(held, false);
            if (outcome) return { outcome, ms };
          }
          held = filling;
          filling = new Int16Array(FRAME_SAMPLES);
          filled = 0;
        }
      }
    } catch (err) {
      // The synthesis stops with a barge-in or the room's end.
      if (stop.aborted) return { outcome: 'stopped', ms };
      if (this.opts.gone.aborted) return { outcome: 'ended', ms };
      throw err;
    }
    if (filled > 0) {
      if (held) {
        const outcome = await send(held, false);
        if (outcome) return { outcome, ms };
      }
      held = filling; // zero after `filled`: padded with silence
    }
    if (held) {
      const outcome = await send(held, true);
      if (outcome) return { outcome, ms };
    }
    return { outcome: 'done', ms };
  }
}
