/**
 * Rules and state of one `/ws/v1/t2a_v2` session (speech-beyond.md section 1, rules 12.2–12.7), apart
 * from the socket: which event is legal when, what each `task_continue` becomes, soft and fatal errors,
 * the idle timeout on the emulator clock. Each piece is planned, billed, signed and sent by piece.ts,
 * which the bidirectional socket shares.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { parseFirst } from '../../../core/http/validation.js';
import { invalidParams, STATUS_MSG } from '../errors.js';
import { firstProblem } from '../schema.js';
import type { SpeechArea } from '../state.js';
import { codePoints } from '../text.js';
import {
  IDLE_MS,
  AudioSender,
  audioFrame,
  BINARY_FRAME_MSG,
  checkTaskStart,
  closeCodeFor,
  event,
  failureOf,
  readClientFrame,
  synthesizePiece,
  type PieceOut,
  type SessionPort,
} from './piece.js';
import { taskContinueSchema, type TaskStart } from './schema.js';

/** A piece over this many characters is skipped with 2204. */
export const MAX_PIECE_CHARS = 10_000;
/** With this many pieces waiting, the next one is refused with 2205 (rule 12.6). */
export const MAX_QUEUED = 20;

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

export function openSession(emu: Emulator, port: SessionPort, ctx: SessionContext): Session {
  let phase: Phase = 'connected';
  let start: TaskStart | null = null;
  /** When task_start was accepted: the session keeps the voices it started with (E11). */
  let startedAtMs = 0;
  const queue: Item[] = [];
  let busy = false;
  let idle: number | null = null;
  const audio = new AudioSender(port);

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
  const failWith = (err: unknown) => fail(...failureOf(emu, err));

  /** The idle clock runs while nothing is being synthesized, from the last message or result. */
  const armIdle = () => {
    port.cancel(idle);
    idle = busy || phase === 'ended' ? null : port.after(IDLE_MS, () => fail(2201, STATUS_MSG[2201]!), 'speech socket idle timeout');
  };
  armIdle();

  const illegal = (what: string) => fail(2202, `${STATUS_MSG[2202]}: ${what}`);

  function onStart(frame: Record<string, unknown>) {
    if (phase !== 'connected') return illegal('task_start was already received; one session per connection');
    try {
      start = checkTaskStart(emu, ctx.account, frame);
    } catch (err) {
      return failWith(err);
    }
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
      return send('task_continued', 2205, `${STATUS_MSG[2205]}: ${MAX_QUEUED} pieces are already waiting`, { data: null, is_final: true });
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
        if (item.kind === 'soft') send('task_continued', item.code, `${STATUS_MSG[item.code]}: ${item.detail}`, { data: null, is_final: true });
        else
          await synthesizePiece(
            emu,
            { account: ctx.account, area: ctx.area, traceId: ctx.traceId, start: start!, signal: port.signal, voicesAsOf: startedAtMs },
            item.text,
            out,
          );
      }
    } catch (err) {
      if (!port.signal.aborted) failWith(err);
    } finally {
      busy = false;
    }
    if (phase === 'finishing' && !port.closed) {
      phase = 'ended';
      // drop_final: the answer ends without its last event, the socket closes cleanly.
      if (!port.shaping?.dropsFinal) send('task_finished');
      port.close(1000, 'task finished');
      return;
    }
    armIdle();
  }

  /** Each audio message of a piece, counted by the one audio sender. */
  const out: PieceOut = {
    chunk: (bytes, isFinal, extra, subtitle, ms) =>
      audio.send(
        audioFrame(bytes, ms, isFinal, extra, subtitle, (data) => event('task_continued', ctx, 0, STATUS_MSG[0]!, data)),
        isFinal,
      ),
    stopped: () => audio.stopped,
    begin: () => port.beginAnswer?.(),
    shaping: port.shaping,
  };

  return {
    onMessage(text) {
      if (phase === 'ended') return;
      armIdle();
      const read = readClientFrame(text);
      if ('code' in read) return fail(read.code, read.msg);
      const frame = read.frame;
      try {
        switch (frame.event) {
          case 'task_start':
            return onStart(frame);
          case 'task_continue':
            return onContinue(frame);
          case 'task_finish':
            return onFinish();
          case 'task_flush':
          case 'task_cancel':
            // Events of the bidirectional socket only (rule E10): an illegal event here.
            return illegal(
              `unknown event ${JSON.stringify(frame.event)} on this socket: it is an event of /ws/v1/t2a_v2_bidi; expected task_start, task_continue or task_finish`,
            );
          default:
            return illegal(`unknown event ${JSON.stringify(frame.event.slice(0, 64))}; expected task_start, task_continue or task_finish`);
        }
      } catch (err) {
        failWith(err);
      }
    },
    onBinary() {
      fail(2013, BINARY_FRAME_MSG);
    },
  };
}
