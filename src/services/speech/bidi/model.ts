/**
 * Rules and state of one `/ws/v1/t2a_v2_bidi` session (speech-current.md section 2, rules E5–E9),
 * apart from the socket: the order of events (2202, 2206), the buffer that turns text into sentences
 * (buffer.ts), the queue of sentences synthesised one after another (each a piece of ws/piece.ts,
 * shared with `/ws/v1/t2a_v2`), flush, cancel and finish, soft refusals (2204, 2205), fatal errors and
 * the idle timeout on the emulator clock.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { readMessage } from '../body.js';
import { STATUS_MSG } from '../errors.js';
import type { SpeechArea } from '../state.js';
import { codePoints } from '../text.js';
import {
  AudioSender,
  audioFrame,
  IDLE_MS,
  BINARY_FRAME_MSG,
  checkTaskStart,
  closeCodeFor,
  event,
  failureOf,
  readClientFrame,
  synthesizePiece,
  type EventIds,
  type PieceOut,
  type SessionPort,
} from '../ws/piece.js';
import type { TaskStart } from '../ws/schema.js';
import { SentenceBuffer, type WindowName } from './buffer.js';
import type { Cut } from './cuts.js';
import { BidiJournal, type FrameRecord } from './journal.js';
import { bidiTaskContinueSchema, bidiTaskStartSchema } from './schema.js';
import { settingsView, type BidiSettings } from './settings.js';
import { countOf } from '../../../core/http/describe.js';

/** `task_start`'s own field on the bidi socket (the rest is the speech socket's `task_start`). */
const SESSION_ID = bidiTaskStartSchema.pick({ session_id: true });

/** A `task_continue` longer than this many code points is refused softly with 2204 (E8). */
export const MAX_CONTINUE_CHARS = 10_000;
export const IDLE_LABEL = 'bidi idle timeout';

export interface BidiContext {
  account: Account;
  area: SpeechArea;
  /** The connection's ids; `sessionId` becomes the client's after `task_start`. */
  ids: EventIds & { connectId: string };
  settings: BidiSettings;
  /** A fresh trace for each sentence (E5). */
  newTrace: () => string;
  /** The emulator clock's time, for the journal. */
  now: () => number;
}

interface Sentence {
  index: number;
  text: string;
  reason: Cut['reason'];
  traceId: string;
}

type Phase = 'connected' | 'started' | 'finishing' | 'ended';

export interface BidiSession {
  onMessage(text: string): void;
  onBinary(): void;
  onPing(): void;
  /** The journal record (live). */
  readonly journal: BidiJournal;
  /** The state view's picture: buffer, queue, sentence in progress, waiting flushes, timers. */
  view(): object;
}

export function openBidiSession(emu: Emulator, port: SessionPort, ctx: BidiContext): BidiSession {
  const ids = { ...ctx.ids };
  const journal = new BidiJournal(ids.connectId, settingsView(ctx.settings));
  let phase: Phase = 'connected';
  let start: TaskStart | null = null;
  /** When task_start was accepted: the session keeps the voices it started with (E11). */
  let startedAtMs = 0;
  const queue: Sentence[] = [];
  let current: { sentence: Sentence; abort: AbortController } | null = null;
  /** Sentences made so far, and the highest number finished or dropped: a flush waits for its number. */
  let made = 0;
  let settled = 0;
  const flushes: number[] = [];
  let busy = false;
  let idle: { id: number; dueMs: number } | null = null;
  const audio = new AudioSender(port);
  const buffer = new SentenceBuffer(ctx.settings, { now: ctx.now, after: port.after, cancel: port.cancel }, (window, cuts) => onWindow(window, cuts));

  const log = (frame: Omit<FrameRecord, 'at_ms'>) => journal.frame({ ...frame, at_ms: ctx.now() });

  /** Every event but audio: on the connection's trace (E5) unless a sentence's trace is given. */
  const send = (name: string, code = 0, msg = STATUS_MSG[0]!, extra: object = {}, traceId = ids.traceId, sentence?: number) => {
    if (port.closed) return;
    port.send(event(name, { ...ids, traceId }, code, msg, extra), name);
    log({ dir: 'out', event: name, ...(code ? { code } : {}), ...(sentence ? { sentence } : {}) });
  };

  /** A fatal error: `task_failed`, then close (1011 after an internal fault, else 1000). */
  const fail = (code: number, msg: string) => {
    if (phase === 'ended') return;
    phase = 'ended';
    stopAll();
    send('task_failed', code, msg);
    port.close(closeCodeFor(code), msg);
  };
  const failWith = (err: unknown) => fail(...failureOf(emu, err));
  const illegal = (what: string) => fail(2202, `${STATUS_MSG[2202]}: ${what}`);
  /** A soft refusal (E8): the session goes on. */
  const soft = (code: number, detail: string) => send('task_continued', code, `${STATUS_MSG[code]}: ${detail}`, { data: null, is_final: true });

  /** The idle clock runs while no sentence is being synthesised; client frames, pings and audio restart it. */
  const armIdle = () => {
    port.cancel(idle?.id ?? null);
    idle = null;
    if (busy || phase === 'ended') return;
    const id = port.after(
      IDLE_MS,
      () => {
        journal.timer(ctx.now(), 'idle', 0);
        fail(2201, STATUS_MSG[2201]!);
      },
      IDLE_LABEL,
    );
    idle = { id, dueMs: ctx.now() + IDLE_MS };
  };
  armIdle();
  // The socket sends connected_success as soon as the session is open (ws/socket.ts).
  log({ dir: 'out', event: 'connected_success' });

  /** Drops the buffer, the queue and the sentence in progress (cancel, failure, close). */
  function stopAll() {
    buffer.drop();
    queue.length = 0;
    current?.abort.abort(new Error('cancelled'));
    current = null;
    settled = made;
    if (phase === 'ended') {
      port.cancel(idle?.id ?? null);
      idle = null;
    }
  }
  port.signal.addEventListener('abort', () => {
    phase = 'ended';
    stopAll();
  });

  /** Cuts become sentences in the queue; fragments with nothing to pronounce are dropped. */
  function enqueue(cuts: Cut[]) {
    for (const cut of cuts) {
      const sentence = cut.dropped ? null : { index: ++made, text: cut.text, reason: cut.reason, traceId: '' };
      journal.cut(ctx.now(), cut, sentence?.index ?? null);
      if (sentence) queue.push(sentence);
    }
    if (queue.length) void drain();
  }

  function onWindow(window: WindowName, cuts: Cut[]) {
    journal.timer(ctx.now(), window, cuts.filter((c) => !c.dropped).length);
    if (phase === 'started') enqueue(cuts);
  }

  function onStart(frame: Record<string, unknown>) {
    if (phase !== 'connected') return fail(2206, `${STATUS_MSG[2206]}: task_start was already received; one session per connection`);
    const own = readMessage(SESSION_ID, frame);
    if ('error' in own) return fail(2013, own.error.message);
    try {
      start = checkTaskStart(emu, ctx.account, frame);
    } catch (err) {
      return failWith(err);
    }
    if (own.data.session_id !== undefined) ids.sessionId = own.data.session_id;
    startedAtMs = ctx.now();
    phase = 'started';
    send('task_started');
  }

  function onContinue(frame: Record<string, unknown>) {
    const parsed = readMessage(bidiTaskContinueSchema, frame);
    if ('error' in parsed) return fail(2013, parsed.error.message);
    const text = parsed.data.text;
    // Whitespace only: no event at all; it only refreshed the idle clock (E6).
    if (!/\S/u.test(text)) return;
    const length = codePoints(text);
    if (length > MAX_CONTINUE_CHARS) return soft(2204, `the text has ${length} characters; a task_continue may have at most ${MAX_CONTINUE_CHARS}`);
    const pending = buffer.pendingChars + queue.reduce((n, s) => n + codePoints(s.text), 0);
    if (pending + length > ctx.settings.maxPendingChars) {
      return soft(
        2205,
        `${countOf(pending, 'character')} ${pending === 1 ? 'is' : 'are'} waiting and this text has ${length}; at most ${ctx.settings.maxPendingChars} may wait: send it again later`,
      );
    }
    enqueue(buffer.append(text));
  }

  /** `task_flush` (E8): the buffer is cut at once; `task_flushed` follows the last sentence that exists now. */
  function onFlush() {
    enqueue(buffer.flush());
    flushes.push(made);
    answerFlushes();
  }

  /** `task_cancel` (E8): everything waiting and the sentence in progress go; waiting flushes are answered first. */
  function onCancel() {
    port.cancelled?.();
    stopAll();
    answerFlushes();
    send('task_canceled');
  }

  /** `task_finish` (E8): handled like a flush, then `task_finished` after the last sentence, then close. */
  function onFinish() {
    enqueue(buffer.flush());
    phase = 'finishing';
    finishIfDone();
  }

  function answerFlushes() {
    while (flushes.length && flushes[0]! <= settled) {
      flushes.shift();
      send('task_flushed');
    }
  }

  function finishIfDone() {
    if (phase !== 'finishing' || current || queue.length || port.closed) return;
    phase = 'ended';
    port.cancel(idle?.id ?? null);
    // drop_final: the answer ends without its last event, the socket closes cleanly.
    if (!port.shaping?.dropsFinal) send('task_finished');
    port.close(1000, 'task finished');
  }

  /** Synthesises the queued sentences one after another; their messages never interleave (E7). */
  async function drain() {
    if (busy) return;
    busy = true;
    armIdle();
    try {
      while (queue.length && phase !== 'ended') {
        const sentence = queue.shift()!;
        const abort = new AbortController();
        current = { sentence, abort };
        sentence.traceId = ctx.newTrace();
        const signal = AbortSignal.any([port.signal, abort.signal]);
        send('sentence_start', 0, STATUS_MSG[0]!, {}, sentence.traceId, sentence.index);
        let done = false;
        try {
          done = await synthesizePiece(
            emu,
            { account: ctx.account, area: ctx.area, traceId: sentence.traceId, start: start!, signal, voicesAsOf: startedAtMs },
            sentence.text,
            out(sentence, signal),
          );
        } catch (err) {
          if (!signal.aborted) return failWith(err);
        }
        if (signal.aborted || current?.sentence !== sentence) continue; // cancelled: no sentence_end (E8)
        current = null;
        if (!done) return; // the socket is gone
        send('sentence_end', 0, STATUS_MSG[0]!, {}, sentence.traceId, sentence.index);
        settled = sentence.index;
        answerFlushes();
      }
    } finally {
      busy = false;
      if (phase !== 'ended') armIdle();
    }
    finishIfDone();
  }

  /** The audio messages of one sentence, on its trace, through the one audio sender; none once it is cancelled. */
  function out(sentence: Sentence, signal: AbortSignal): PieceOut {
    return {
      chunk(bytes, isFinal, extra, subtitle, ms) {
        if (signal.aborted) return false;
        const wrap = (data: object) => event('task_continued', { ...ids, traceId: sentence.traceId }, 0, STATUS_MSG[0]!, data);
        const logged = (ok: boolean) => {
          if (ok) log({ dir: 'out', event: 'task_continued', sentence: sentence.index, is_final: isFinal, audio_bytes: bytes.length });
          return ok;
        };
        // A paced message waits in the guard; the sentence's cancel ends that wait (the socket stays).
        const sent = audio.send(audioFrame(bytes, ms, isFinal, extra, subtitle, wrap), isFinal, signal);
        return typeof sent === 'boolean' ? logged(sent) : sent.then(logged);
      },
      begin: () => port.beginAnswer?.(),
      shaping: port.shaping,
      stopped: () => audio.stopped,
    };
  }

  return {
    journal,
    onMessage(text) {
      const read = readClientFrame(text);
      const name = 'frame' in read ? read.frame.event.slice(0, 40) : '(unreadable)';
      if (phase === 'ended') return;
      if (phase === 'finishing') return log({ dir: 'in', event: name, note: 'ignored after task_finish' });
      log({ dir: 'in', event: name });
      armIdle();
      if ('code' in read) return fail(read.code, read.msg);
      const frame = read.frame;
      try {
        switch (frame.event) {
          case 'task_start':
            return onStart(frame);
          case 'task_continue':
          case 'task_flush':
          case 'task_cancel':
          case 'task_finish':
            if (phase === 'connected') return illegal(`${frame.event} before task_started`);
            if (frame.event === 'task_continue') return onContinue(frame);
            if (frame.event === 'task_flush') return onFlush();
            if (frame.event === 'task_cancel') return onCancel();
            return onFinish();
          default:
            return illegal(
              `unknown event ${JSON.stringify(frame.event.slice(0, 64))}; expected task_start, task_continue, task_flush, task_cancel or task_finish`,
            );
        }
      } catch (err) {
        failWith(err);
      }
    },
    onBinary() {
      if (phase === 'ended') return;
      if (phase === 'finishing') return log({ dir: 'in', event: '(binary)', note: 'ignored after task_finish' });
      log({ dir: 'in', event: '(binary)' });
      fail(2013, BINARY_FRAME_MSG);
    },
    onPing() {
      log({ dir: 'in', event: '(ping)' });
      armIdle();
    },
    view() {
      return {
        connect_id: ids.connectId,
        session_id: ids.sessionId,
        phase,
        buffer: buffer.pending,
        queue: queue.map((s) => ({ sentence: s.index, text: s.text })),
        in_progress: current ? { sentence: current.sentence.index, text: current.sentence.text, trace_id: current.sentence.traceId } : null,
        flushes_waiting: flushes.length,
        timers: { ...buffer.windows, idle: idle?.dueMs ?? null },
        settings: settingsView(ctx.settings),
      };
    },
  };
}
