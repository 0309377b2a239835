/**
 * What both speech sockets share (`/ws/v1/t2a_v2`, one piece per `task_continue`, and
 * `/ws/v1/t2a_v2_bidi`, one piece per sentence): reading a client frame, checking `task_start` by the
 * HTTP body's rules, the event envelope, the codes and close codes, the audio sender (through the
 * socket's stream guard, which counts audio messages for the `cut_after_chunks` fault), and one piece's synthesis: planned, billed and signed
 * as one HTTP request, sent as frame-aligned hex chunks, the last one with `extra_info`.
 */
import { encodeAudioStream, type SynthStream } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { AudioMade, type AudioFrame, type AudioShaping, type StreamEnd } from '../../../core/stream/guard.js';
import { parseJson } from '../../../core/http/number-literals.js';
import { parseFirst } from '../../../core/http/validation.js';
import { parseWith } from '../body.js';
import { invalidParams, SpeechError, STATUS_MSG } from '../errors.js';
import { encodeOptionsOf, planRequest, readRequest, recordSignature, recordSignatureTimes, startSynthesis, type SynthesisPlan } from '../model.js';
import { t2aRequestSchema } from '../schema.js';
import type { SpeechArea, StreamRecordEnd } from '../state.js';
import { audioHex, extraInfo, inflatedInfo, MAX_EVENT_AUDIO_BYTES, type ExtraInfo } from '../stream.js';
import { clientFrameSchema, taskStartSchema, type TaskStart } from './schema.js';
import { SubtitleFeed, type WsSubtitle } from './subtitles.js';

/**
 * Both speech sockets end a session with 2201 after 120 s on the emulator clock with no client frame
 * and no audio (rule 12.7; E9 for the bidirectional socket, where a client ping counts too).
 */
export const IDLE_MS = 120_000;

/** Close codes (rule 12.3): 1011 after an internal fault, 1000 after everything else. */
export function closeCodeFor(code: number): number {
  return code === 1000 || code === 1001 ? 1011 : 1000;
}

/** What a session needs from its socket (socket.ts gives it the shared wire). */
export interface SessionPort {
  readonly signal: AbortSignal;
  readonly closed: boolean;
  send(body: object, event: string): void;
  /**
   * Sends one audio message through the socket's stream guard (chunk count, `cut_after_chunks`, pace,
   * faults inside the audio); false once the stream ended (client gone, cut by the fault). A promise
   * while a paced message waits; `stop` (a cancelled piece) ends that wait.
   */
  sendAudio(frame: AudioFrame<object>, isFinal: boolean, stop?: AbortSignal): boolean | Promise<boolean>;
  /** A piece begins: its first audio waits the pace's `ttfa_ms` (the first piece counts from the upgrade). */
  beginAnswer?(): void;
  /** The client cancelled the audio in progress (bidi `task_cancel`): the journal times the cut. */
  cancelled?(): void;
  /** The guard's faults applied around the encoder (`gap_ms`, `split_frame`). */
  readonly shaping?: AudioShaping;
  /** Why the guard ended the stream (`cut` by the fault…); null while it runs. */
  readonly streamEnded: StreamEnd | null;
  close(code: number, reason: string): void;
  after(ms: number, fn: () => void, label: string): number;
  cancel(id: number | null): void;
}

/** The ids every event of a socket carries (bidi adds `connect_id`). */
export interface EventIds {
  sessionId: string;
  traceId: string;
  connectId?: string;
}

/** `connected_success`, `task_failed` … with the fields every event carries. */
export function event(name: string, ids: EventIds, code = 0, msg = STATUS_MSG[0]!, extra: object = {}) {
  const connect = ids.connectId === undefined ? {} : { connect_id: ids.connectId };
  return { event: name, session_id: ids.sessionId, ...connect, trace_id: ids.traceId, ...extra, base_resp: { status_code: code, status_msg: msg } };
}

/** The code and text of a fatal error: a SpeechError as it is, anything else the internal 1000 (logged). */
export function failureOf(emu: Emulator, err: unknown): [number, string] {
  if (err instanceof SpeechError) return [err.code, err.message];
  emu.logger.error({ err }, 'speech socket failed');
  return [1000, STATUS_MSG[1000]!];
}

/** One client text frame: an object with an `event` name, or the fatal code and text of what is wrong with it. */
export function readClientFrame(text: string): { frame: Record<string, unknown> & { event: string } } | { code: number; msg: string } {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch {
    return { code: 2013, msg: 'invalid params, message is not valid JSON: each message must be one JSON object with an event field' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { code: 2013, msg: 'invalid params, message must be a JSON object with an event field' };
  if (!parseFirst(clientFrameSchema, json).success) return { code: 2202, msg: `${STATUS_MSG[2202]}: the message has no event field (string)` };
  // The message itself (not the schema's copy): its decimal literals are noted against it (body.ts).
  return { frame: json as Record<string, unknown> & { event: string } };
}

export const BINARY_FRAME_MSG = 'invalid params, binary frames are not accepted: send JSON text frames';

/** `task_start` checked by the same plan as the HTTP body (the text is a stand-in until pieces arrive); throws the SpeechError. */
export function checkTaskStart(emu: Emulator, account: Account, frame: Record<string, unknown>): TaskStart {
  // The message's own integer fields are the T2A request's (pieceBody builds that request from them).
  const start = parseWith(taskStartSchema, frame, { what: 'message', typedAlsoBy: [t2aRequestSchema] });
  planRequest(emu, account, readRequest(pieceBody(start, 'Hello')));
  return start;
}

/**
 * Sends the audio messages of a socket through its stream guard (core/stream/guard.ts, reached by the
 * port): the guard counts them, whatever piece they belong to, and drops the connection after the
 * `cut_after_chunks` fault's count.
 */
export class AudioSender {
  constructor(private readonly port: SessionPort) {}

  /** Sends one audio message; false when the socket is gone (or the fault has just dropped it). */
  send(frame: AudioFrame<object>, isFinal: boolean, stop?: AbortSignal): boolean | Promise<boolean> {
    if (this.port.closed) return false;
    return this.port.sendAudio(frame, isFinal, stop);
  }

  /** How a piece that could not send ended. */
  get stopped(): StreamRecordEnd {
    return this.port.streamEnded === 'cut' ? 'cut' : 'aborted';
  }
}

/** What one piece sends through: an audio message, and whether the piece was stopped from outside (bidi's cancel). */
export interface PieceOut {
  /** Sends one `task_continued` with `ms` of new audio; false once nothing more may be sent (a promise while paced). */
  chunk(audio: Buffer, isFinal: boolean, extra: ExtraInfo | undefined, subtitle: WsSubtitle | undefined, ms: number): boolean | Promise<boolean>;
  /** How a piece that could not send ended (for the state view). */
  stopped(): StreamRecordEnd;
  /** The piece begins (its pace's `ttfa_ms` counts from here). */
  begin?(): void;
  /** The guard's faults applied around the encoder (`gap_ms`, `split_frame`). */
  readonly shaping?: AudioShaping;
}

/** The body of one audio message; `oddHex` is the `hex_odd` fault. */
export function audioBody(audio: Buffer, isFinal: boolean, extra?: ExtraInfo, subtitle?: WsSubtitle, oddHex = false): object {
  const data = subtitle ? { audio: audioHex(audio, oddHex), subtitle } : { audio: audioHex(audio, oddHex) };
  return { data, is_final: isFinal, ...(extra ? { extra_info: extra } : {}) };
}

/**
 * One audio message as the stream guard takes it: the audio apart, and how the event is made of it
 * (`wrap` adds the event's envelope), so the guard can damage the audio without reading JSON.
 */
export function audioFrame(
  audio: Buffer,
  ms: number,
  isFinal: boolean,
  extra: ExtraInfo | undefined,
  subtitle: WsSubtitle | undefined,
  wrap: (body: object) => object,
): AudioFrame<object> {
  return {
    audio,
    ms,
    render: (bytes, d) => wrap(audioBody(bytes, isFinal, extra && inflatedInfo(extra, d.inflate), subtitle, d.oddHex)),
  };
}

export interface PieceContext {
  account: Account;
  area: SpeechArea;
  /** The trace the state view files the piece under. */
  traceId: string;
  start: TaskStart;
  /** Aborts the piece: the client left, or (bidi) cancelled it. */
  signal: AbortSignal;
  /** When the session started: a voice deleted since keeps speaking in it (E11). */
  voicesAsOf?: number;
}

/**
 * One piece: planned, billed and signed as one HTTP request, then sent as frame-aligned chunks as it is
 * synthesized (a synthesis slot held while it is encoded, shared with HTTP T2A). True when its last chunk went out.
 * Throws the SpeechError of the first rule that refuses it, before anything is billed.
 */
export async function synthesizePiece(emu: Emulator, ctx: PieceContext, text: string, out: PieceOut): Promise<boolean> {
  // The speech engine speaks the piece sentence by sentence as it is sent, as HTTP's event stream does;
  // a FLAC or μ-law WAV piece states its length in its header, so it is spoken whole first.
  const { plan, synth, growing } = await startSynthesis(emu, ctx.area, ctx.account, readRequest(pieceBody(ctx.start, text)), ctx.signal, {
    voicesAsOf: ctx.voicesAsOf,
    growing: true,
    lengthUpFront: ['flac'],
  });
  recordSignature(emu, plan, synth);
  // A growing piece's timeline and length are final once its last block is made: the record gets them.
  if (growing)
    synth.done().then(
      () => recordSignatureTimes(emu, plan, synth),
      () => undefined,
    );
  // A client that leaves while the piece waits frees its place in line.
  const slot = emu.synthesis.slot();
  await slot.take(ctx.signal);
  try {
    return await sendPiece(ctx, plan, synth, text, out, slot.free);
  } finally {
    slot.free();
  }
}

/**
 * Sends one piece's chunks. A chunk that answers with a promise waits for its pace: the synthesis
 * slot is freed first (no slot is held while waiting), the rest of the piece follows the pace.
 */
async function sendPiece(ctx: PieceContext, plan: SynthesisPlan, synth: SynthStream, text: string, out: PieceOut, release: () => void): Promise<boolean> {
  out.begin?.();
  const run = ctx.area.startStream(ctx.account.id, ctx.traceId);
  const start = ctx.start;
  // Subtitles: each audio message carries what its audio finished saying (never the is_final one).
  const subtitles =
    (start as { subtitle_enable?: unknown }).subtitle_enable === true ? new SubtitleFeed(synth.timeline, start.subtitle_type ?? 'sentence', text) : null;
  const shaping = out.shaping;
  const made = new AudioMade(plan.sampleRate, plan.channels);
  const source = made.counting(shaping ? shaping.audioSource(synth, plan.sampleRate, plan.channels) : synth);
  let sent = 0;
  let held: Buffer | null = null;
  let heldMs = 0;
  const stop = () => {
    run.end(out.stopped(), sent);
    return false;
  };
  const chunk = async (audio: Buffer, isFinal: boolean, extra: ExtraInfo | undefined, subtitle: WsSubtitle | undefined, upToMs: number) => {
    const ok = out.chunk(audio, isFinal, extra, subtitle, made.newMs(upToMs));
    if (typeof ok === 'boolean') return ok;
    release();
    return ok;
  };
  try {
    const audio = encodePiece(plan, synth, source, shaping?.addedFrames(plan.sampleRate) ?? 0);
    for await (const next of shaping ? shaping.encodedChunks(audio) : audio) {
      if (held && !(await chunk(held, false, undefined, subtitles?.take(heldMs), heldMs))) return stop();
      if (held) sent++;
      held = next;
      heldMs = made.ms;
      run.progress(sent);
    }
    const extra = extraInfo(await audio.meta(), plan);
    // What the last audio says travels with it; the is_final message that follows then has no audio.
    const lastSubtitle = subtitles?.rest();
    if (held && lastSubtitle) {
      if (!(await chunk(held, false, undefined, lastSubtitle, made.ms))) return stop();
      sent++;
      held = Buffer.alloc(0);
    }
    if (!held || !(await chunk(held, true, extra, undefined, made.ms))) return stop();
    run.end('done', sent + 1);
    return true;
  } catch (err) {
    run.end(ctx.signal.aborted ? out.stopped() : 'failed', sent);
    throw err;
  }
}

/**
 * The HTTP body one piece stands for: `task_start` without its event, the piece's text, streaming on
 * and no aggregate. The socket's names map to the HTTP ones; formats and rates follow the HTTP
 * stream's rules (formats.ts), except `wav`, which the socket refuses with its own hint.
 */
export function pieceBody(start: TaskStart, text: string): Record<string, unknown> {
  const {
    event: _event,
    text_normalization,
    subtitle_type: _s,
    continuous_sound: _c,
    output_format: _o,
    ...rest
  } = start as TaskStart & { output_format?: unknown };
  const body: Record<string, unknown> = { ...rest, text, stream: true, stream_options: { exclude_aggregated_audio: true } };
  const vs = start.voice_setting;
  if (vs) {
    const { english_normalization, ...v } = vs;
    body.voice_setting = { ...v, text_normalization: v.text_normalization ?? english_normalization ?? text_normalization };
  }
  if (start.audio_setting?.format === 'wav')
    throw invalidParams('audio_setting.format wav is supported only in non-streaming output; over the socket use mp3, pcm, flac, pcmu_raw, pcmu_wav or opus');
  return body;
}

/**
 * The encoded chunks of a piece (frame-aligned, at most one event's size; one Ogg stream per piece)
 * and, after the last, their true metadata. A piece's FLAC header and μ-law WAV header carry its
 * true length up front.
 */
function encodePiece(plan: SynthesisPlan, synth: SynthStream, source: AsyncIterable<Int16Array>, addedFrames: number) {
  return encodeAudioStream(plan.format, source, { ...encodeOptionsOf(plan), maxChunkBytes: MAX_EVENT_AUDIO_BYTES, totalFrames: synth.frames + addedFrames });
}
