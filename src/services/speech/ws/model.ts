/**
 * Rules and state of one `/ws/v1/t2a_v2` session (speech-beyond.md section 1, rules 12.2–12.7), apart
 * from the socket: which event is legal when, what each `task_continue` becomes, soft and fatal errors,
 * the idle timeout on the emulator clock. Each piece is planned, billed and signed as one HTTP request.
 */
import { parseFirst } from '../../../core/validation.js';
import { encodeAudioStream, type SynthStream } from '../../../audio/index.js';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import type { StreamEnd } from '../../../core/stream-guard.js';
import { invalidParams, SpeechError, STATUS_MSG } from '../errors.js';
import { encodeOptionsOf, planRequest, readRequest, recordSignature, startSynthesis, type SynthesisPlan } from '../model.js';
import { firstProblem } from '../schema.js';
import type { SpeechArea } from '../state.js';
import { extraInfo, MAX_EVENT_AUDIO_BYTES, type ExtraInfo } from '../stream.js';
import { codePoints } from '../text.js';
import { clientFrameSchema, taskContinueSchema, taskStartSchema, type TaskStart } from './schema.js';
import { countingFrames, SubtitleFeed, type WsSubtitle } from './subtitles.js';

/** 120 s without a client message or a result ends the session with 2201 (rule 12.7). */
export const IDLE_MS = 120_000;
/** A piece over this many characters is skipped with 2204. */
export const MAX_PIECE_CHARS = 10_000;
/** With this many pieces waiting, the next one is refused with 2205 (rule 12.6). */
export const MAX_QUEUED = 20;

export const SOCKET_CODE_MSG: Record<number, string> = {
  2201: 'timeout disconnect',
  2202: 'illegal event',
  2203: 'empty text, skipped',
  2204: 'character limit exceeded, skipped',
  2205: 'request limit exceeded',
};

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
   * Sends one audio message through the socket's stream guard (chunk count, `cut_after_chunks`);
   * false once the stream ended (client gone, cut by the fault).
   */
  sendAudio(body: object, isFinal: boolean): boolean;
  /** Why the guard ended the stream (`cut` by the fault…); null while it runs. */
  readonly streamEnded: StreamEnd | null;
  close(code: number, reason: string): void;
  after(ms: number, fn: () => void, label: string): number;
  cancel(id: number | null): void;
}

export interface SessionContext {
  account: Account;
  sessionId: string;
  traceId: string;
  area: SpeechArea;
}

type Phase = 'connected' | 'started' | 'finishing' | 'ended';
type Item = { kind: 'text'; text: string } | { kind: 'soft'; code: number; detail: string };

export interface Session {
  /** One client text frame (already counted in the journal). */
  onMessage(text: string): void;
  /** A binary frame: the socket takes only JSON text. */
  onBinary(): void;
}

/** `connected_success`, `task_failed` … with the fields every event carries. */
export function event(name: string, ctx: { sessionId: string; traceId: string }, code = 0, msg = STATUS_MSG[0]!, extra: object = {}) {
  return { event: name, session_id: ctx.sessionId, trace_id: ctx.traceId, ...extra, base_resp: { status_code: code, status_msg: msg } };
}

export function openSession(emu: Emulator, port: SessionPort, ctx: SessionContext): Session {
  let phase: Phase = 'connected';
  let start: TaskStart | null = null;
  /** When task_start was accepted: the session keeps the voices it started with (E11). */
  let startedAtMs = 0;
  const queue: Item[] = [];
  let busy = false;
  let idle: number | null = null;

  const send = (name: string, code = 0, msg = STATUS_MSG[0]!, extra: object = {}) => port.send(event(name, ctx, code, msg, extra), name);

  /** A fatal error: `task_failed`, then close (rule 12.3 decides the code). */
  const fail = (code: number, msg: string) => {
    if (phase === 'ended') return;
    phase = 'ended';
    port.cancel(idle);
    queue.length = 0;
    send('task_failed', code, msg);
    port.close(closeCodeFor(code), msg);
  };
  const failWith = (err: unknown) => {
    if (err instanceof SpeechError) return fail(err.code, err.message);
    emu.logger.error({ err }, 'speech socket failed');
    fail(1000, STATUS_MSG[1000]!);
  };

  /** The idle clock runs while nothing is being synthesized, from the last message or result. */
  const armIdle = () => {
    port.cancel(idle);
    idle = busy || phase === 'ended' ? null : port.after(IDLE_MS, () => fail(2201, SOCKET_CODE_MSG[2201]!), 'speech socket idle timeout');
  };
  armIdle();

  const illegal = (what: string) => fail(2202, `${SOCKET_CODE_MSG[2202]}: ${what}`);

  function onStart(frame: Record<string, unknown>) {
    if (phase !== 'connected') return illegal('task_start was already received; one session per connection');
    const parsed = parseFirst(taskStartSchema, frame);
    if (!parsed.success) return fail(2013, invalidParams(firstProblem(parsed.problem)).message);
    try {
      // The same plan as the HTTP body checks every field; the text is a stand-in until pieces arrive.
      planRequest(emu, ctx.account, readRequest(pieceBody(parsed.data, 'Hello')));
    } catch (err) {
      return failWith(err);
    }
    start = parsed.data;
    startedAtMs = emu.clock.now();
    phase = 'started';
    send('task_started');
  }

  function onContinue(frame: Record<string, unknown>) {
    if (phase === 'connected') return illegal('task_continue before task_started');
    if (phase !== 'started') return illegal('task_continue after task_finish');
    const parsed = parseFirst(taskContinueSchema, frame);
    if (!parsed.success) return fail(2013, invalidParams(firstProblem(parsed.problem)).message);
    if (queue.length >= MAX_QUEUED) {
      // Refused on arrival: the piece never entered the queue.
      return send('task_continued', 2205, `${SOCKET_CODE_MSG[2205]}: ${MAX_QUEUED} pieces are already waiting`, { data: null, is_final: true });
    }
    const text = parsed.data.text ?? '';
    const length = codePoints(text);
    if (!/[\p{L}\p{N}]/u.test(text)) queue.push({ kind: 'soft', code: 2203, detail: length ? 'the text has nothing to pronounce' : 'the text is empty' });
    else if (length >= MAX_PIECE_CHARS)
      queue.push({ kind: 'soft', code: 2204, detail: `the text has ${length} characters; a piece must be shorter than ${MAX_PIECE_CHARS}` });
    else queue.push({ kind: 'text', text });
    void drain();
  }

  function onFinish() {
    if (phase === 'connected') return illegal('task_finish before task_started');
    if (phase !== 'started') return illegal('task_finish was already received');
    phase = 'finishing';
    void drain();
  }

  /** Answers the queued pieces in order; after `task_finish`, the last answer is `task_finished`. */
  async function drain() {
    if (busy) return;
    busy = true;
    port.cancel(idle);
    try {
      while (queue.length && phase !== 'ended' && !port.closed) {
        const item = queue.shift()!;
        if (item.kind === 'soft') send('task_continued', item.code, `${SOCKET_CODE_MSG[item.code]}: ${item.detail}`, { data: null, is_final: true });
        else await synthesizePiece(item.text);
      }
    } catch (err) {
      if (!port.signal.aborted) failWith(err);
    } finally {
      busy = false;
    }
    if (phase === 'finishing' && !port.closed) {
      phase = 'ended';
      send('task_finished');
      port.close(1000, 'task finished');
      return;
    }
    armIdle();
  }

  /** One piece: planned, billed and signed as one HTTP request, sent as frame-aligned chunks. */
  async function synthesizePiece(text: string) {
    const { plan, synth } = await startSynthesis(emu, ctx.area, ctx.account, readRequest(pieceBody(start!, text)), port.signal, {
      voicesAsOf: startedAtMs,
    });
    recordSignature(emu, plan, synth);
    // One synthesis slot per piece being encoded, shared with HTTP T2A (bounds memory under load); a
    // client that leaves while the piece waits frees its place in line.
    const release = await emu.synthesis.acquire(port.signal);
    try {
      await sendPiece(plan, synth, text);
    } finally {
      release();
    }
  }

  async function sendPiece(plan: SynthesisPlan, synth: Awaited<ReturnType<typeof startSynthesis>>['synth'], text: string) {
    const run = ctx.area.startStream(ctx.account.id, ctx.traceId);
    // Subtitles: each audio message carries what its audio finished saying (never the is_final one).
    const subtitles =
      (start as { subtitle_enable?: unknown }).subtitle_enable === true ? new SubtitleFeed(synth.timeline, start!.subtitle_type ?? 'sentence', text) : null;
    let madeFrames = 0;
    const source = subtitles ? countingFrames(synth, plan.channels, (n) => (madeFrames += n)) : synth;
    const madeMs = () => (madeFrames * 1000) / plan.sampleRate;
    let sent = 0;
    let held: Buffer | null = null;
    let heldMs = 0;
    try {
      const audio = encodePiece(plan, synth, source);
      for await (const chunk of audio) {
        if (held && !sendChunk(held, false, undefined, subtitles?.take(heldMs))) return run.end(port.streamEnded === 'cut' ? 'cut' : 'aborted', sent);
        if (held) sent++;
        held = chunk;
        heldMs = madeMs();
        run.progress(sent);
      }
      const extra = extraInfo(await audio.meta(), plan);
      // What the last audio says travels with it; the is_final message that follows then has no audio.
      const lastSubtitle = subtitles?.rest();
      if (held && lastSubtitle) {
        if (!sendChunk(held, false, undefined, lastSubtitle)) return run.end(port.streamEnded === 'cut' ? 'cut' : 'aborted', sent);
        sent++;
        held = Buffer.alloc(0);
      }
      if (!held || !sendChunk(held, true, extra)) return run.end(port.streamEnded === 'cut' ? 'cut' : 'aborted', sent);
      run.end('done', sent + 1);
    } catch (err) {
      run.end(port.signal.aborted ? 'aborted' : 'failed', sent);
      throw err;
    }
  }

  /** Sends one audio message; false once the stream ended (the client left, or a fault cut it). */
  function sendChunk(audio: Buffer, isFinal: boolean, extra?: ExtraInfo, subtitle?: WsSubtitle): boolean {
    if (port.closed) return false;
    const data = subtitle ? { audio: audio.toString('hex'), subtitle } : { audio: audio.toString('hex') };
    return port.sendAudio(event('task_continued', ctx, 0, STATUS_MSG[0]!, { data, is_final: isFinal, ...(extra ? { extra_info: extra } : {}) }), isFinal);
  }

  return {
    onMessage(text) {
      if (phase === 'ended') return;
      armIdle();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return fail(2013, 'invalid params, message is not valid JSON: each message must be one JSON object with an event field');
      }
      if (json === null || typeof json !== 'object' || Array.isArray(json))
        return fail(2013, 'invalid params, message must be a JSON object with an event field');
      const frame = clientFrameSchema.safeParse(json);
      if (!frame.success) return illegal('the message has no event field (string)');
      try {
        switch (frame.data.event) {
          case 'task_start':
            return onStart(frame.data);
          case 'task_continue':
            return onContinue(frame.data);
          case 'task_finish':
            return onFinish();
          case 'task_flush':
          case 'task_cancel':
            // Events of the bidirectional socket only (rule E10): an illegal event here.
            return illegal(
              `unknown event ${JSON.stringify(frame.data.event)} on this socket: it is an event of /ws/v1/t2a_v2_bidi; expected task_start, task_continue or task_finish`,
            );
          default:
            return illegal(`unknown event ${JSON.stringify(frame.data.event.slice(0, 64))}; expected task_start, task_continue or task_finish`);
        }
      } catch (err) {
        failWith(err);
      }
    },
    onBinary() {
      fail(2013, 'invalid params, binary frames are not accepted: send JSON text frames');
    },
  };
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
  const as = start.audio_setting;
  if (as?.format === 'wav')
    throw invalidParams('audio_setting.format wav is supported only in non-streaming output; over the socket use pcm, pcmu_wav, mp3 or flac');
  return body;
}

/**
 * The encoded chunks of a piece (frame-aligned, at most one event's size; one Ogg stream per piece)
 * and, after the last, their true metadata. A piece's FLAC header and μ-law WAV header carry its
 * true length up front.
 */
function encodePiece(plan: SynthesisPlan, synth: SynthStream, source: AsyncIterable<Int16Array> = synth) {
  return encodeAudioStream(plan.format, source, { ...encodeOptionsOf(plan), maxChunkBytes: MAX_EVENT_AUDIO_BYTES, totalFrames: synth.frames });
}
