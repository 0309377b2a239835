/**
 * The two conversation sockets: this file reads frames and sends events. The rules of each message
 * live in model.ts (meta, replies) and turn-taking.ts (when an utterance ends and whether it is answered).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Account } from '../../../core/state/accounts.js';
import { admitUpgrade } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { readWorded } from '../issues.js';
import { isFinalMessage, parseJsonObject, unwrapMeta } from '../shared/socket-messages.js';
import { MAX_FRAME_BYTES } from '../../../core/socket/wire.js';
import { idleRule, SOCKET_IDLE_MS } from '../../../core/socket/idle.js';
import { messageBytes } from '../../../core/socket/protocol.js';
import { openWire, type Wire } from '../shared/socket-wire.js';
import { appendPcm, INPUT_RATE, newUtterance, nextPartial, recognizeUtterance, type Utterance } from '../shared/utterance.js';
import {
  addLive,
  badParameter,
  ConversationError,
  countTurn,
  insufficientBalance,
  latencyProfile,
  openConversation,
  recordTurn,
  type ConversationMeta,
  type ConversationMode,
  type ConversationState,
  type LiveSession,
} from './model.js';
import { CLOSE_FAULT, CLOSE_IDLE, CLOSE_POLICY, socketRefusal, streamMetaSchema, textMetaSchema } from './schema.js';
import { runReply, type ReplyContext } from './spoken-reply.js';
import { afterAudio, beforeMeta, endOfUtterance } from './turn-taking.js';

export function conversationSocket(emu: Emulator, state: ConversationState, socket: WebSocket, req: FastifyRequest, mode: ConversationMode): void {
  // The reply audio goes through the guard's audio path: the pace and audio fault fields, and under
  // `--latency realistic` the pace profile every audio stream has (recognition and the language model
  // keep their own delays, reply.ts).
  const wire = openWire(
    emu,
    socket,
    req,
    () => {
      const tooLarge = badParameter(`message: a frame is at most ${MAX_FRAME_BYTES} bytes (8 MiB)`);
      wire.send({ type: 'error', code: tooLarge.code, message: tooLarge.message });
    },
    { carrier: 'binary', latency: emu.config.latency },
  );
  const fail = (code: string, message: string, closeCode = CLOSE_POLICY) => {
    wire.send({ type: 'error', code, message });
    wire.close(closeCode, message);
  };

  // The admission path (core/http/admission.ts): close_ws, fault code, fault status, key, capability,
  // decided before the upgrade (routes.ts) and read back from the request.
  const admission = admitUpgrade(emu, req, 'calls');
  if (!admission.ok) {
    const refusal = socketRefusal(admission.refusal);
    if (refusal.event) return fail(refusal.event.code, refusal.event.message, refusal.closeCode);
    return wire.close(refusal.closeCode, refusal.reason);
  }

  const conv = new Conversation(emu, state, admission.account, wire, mode, fail);
  // 120 s on the emulator clock without a client message (a reply in progress does not count): an
  // `error` event DEADLINE_EXCEEDED, then close 1001.
  const touch = idleRule(
    wire,
    SOCKET_IDLE_MS,
    'conversation socket idle timeout',
    () => {
      const message = `idle timeout: no message from the client for ${SOCKET_IDLE_MS / 1000} s`;
      wire.send({ type: 'error', code: 'DEADLINE_EXCEEDED', message });
      wire.close(CLOSE_IDLE, message);
    },
    () => conv.answering,
  );
  conv.onTurnEnd = touch;
  socket.on('message', (data: RawData, isBinary: boolean) => {
    touch();
    try {
      conv.onMessage(messageBytes(data), isBinary);
    } catch (err) {
      emu.logger.error({ err }, 'conversation socket failed');
      fail('INTERNAL', 'internal error while handling a message', CLOSE_FAULT);
    }
  });
}

/** The per-connection state machine: waiting for meta, listening (and answering), finished. */
class Conversation {
  private phase: 'meta' | 'listening' | 'finished' = 'meta';
  private ctx: ReplyContext | null = null;
  private session: LiveSession | null = null;
  private utterance: Utterance = newUtterance();
  private pauseTimer: number | null = null;
  private busy = false;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  /** Called when a turn's work ends (the idle rule counts from there). */
  onTurnEnd: () => void = () => {};

  /** A reply is being made: the socket is not idle. */
  get answering(): boolean {
    return this.pending > 0;
  }

  constructor(
    private readonly emu: Emulator,
    private readonly state: ConversationState,
    private readonly account: Account,
    private readonly wire: Wire,
    private readonly mode: ConversationMode,
    private readonly fail: (code: string, message: string, closeCode?: number) => void,
  ) {}

  onMessage(data: Buffer, isBinary: boolean): void {
    if (this.wire.closed) return;
    if (isBinary) {
      this.wire.recordIn(data.length, true);
      return this.onAudio(data);
    }
    const text = data.toString('utf8');
    const parsed = parseJsonObject(text);
    this.wire.recordIn(data.length, false, parsed.ok ? eventName(parsed.value) : 'invalid', parsed.ok ? parsed.value : text);
    if (!parsed.ok) return this.refuse(badParameter(parsed.message));
    if (this.phase === 'meta') return this.onMeta(parsed.value);
    if (isFinalMessage(parsed.value)) this.endUtterance(true);
    // Other JSON messages after meta are ignored (journaled only).
  }

  private onMeta(msg: Record<string, unknown>): void {
    if (isFinalMessage(msg)) return this.refuse(beforeMeta('is_final'));
    const inner = unwrapMeta(msg);
    const prefix = inner === msg ? '' : 'meta.';
    const parsed = readWorded(this.mode === 'text' ? textMetaSchema : streamMetaSchema, inner, { prefix, whole: prefix.replace(/\.$/, '') || 'message' });
    if (!parsed.success) return this.refuse(badParameter(parsed.text));
    const meta: ConversationMeta = parsed.data;
    let opened;
    try {
      opened = openConversation(this.emu, this.account, this.mode, meta, prefix);
    } catch (err) {
      if (err instanceof ConversationError) return this.refuse(err);
      throw err;
    }
    const { role, language } = opened;
    this.session = opened.session;
    this.wire.onClose(addLive(this.state, this.session));
    // The account's id stream moved on (a new session id): kept so no id is handed out twice.
    this.emu.markDirty('ids', null, this.account.id);
    this.ctx = { emu: this.emu, account: this.account, wire: this.wire, role, language, tokenEvents: this.mode === 'text' };
    this.phase = 'listening';
    this.wire.send({ type: 'session_created', session_id: this.session.session_id });

    const text = meta.text_input ?? '';
    if (this.mode === 'text' && text.trim() !== '') {
      this.phase = 'finished';
      const t0 = performance.now();
      this.enqueue(() => this.answer(text, { t0, asrMs: 0 }));
    }
  }

  private onAudio(data: Buffer): void {
    if (this.phase === 'meta') return this.refuse(beforeMeta('audio'));
    if (this.phase === 'finished') return; // text mode, or after the one turn of stream-text
    const utterance = this.utterance;
    this.wire.keepAudio(data, INPUT_RATE);
    appendPcm(utterance, data);
    const next = afterAudio(this.mode, utterance);
    if (next.kind === 'refuse') return this.refuse(next.error);
    if (!this.busy) {
      const partial = nextPartial(this.emu, utterance);
      if (partial) this.wire.send({ type: 'asr_partial', asr_text: partial.text });
    }
    if (next.kind === 'end') return this.endUtterance(false);
    if (next.kind === 'wait') {
      this.wire.cancel(this.pauseTimer);
      this.pauseTimer = this.wire.after(next.pauseMs, () => this.endUtterance(false), 'conversation utterance pause');
    }
  }

  /** A conversation rule's refusal (model.ts names its code): the `error` event, then the close. */
  private refuse(error: ConversationError): void {
    this.fail(error.code, error.message);
  }

  /** Ends the current utterance: `{is_final}` (explicit) or the pause/silence rules. */
  private endUtterance(explicit: boolean): void {
    this.wire.cancel(this.pauseTimer);
    this.pauseTimer = null;
    const utterance = this.utterance;
    if (this.phase !== 'listening') return;
    const end = endOfUtterance(this.mode, utterance, explicit);
    this.utterance = newUtterance();
    if (end.kind === 'refuse') return this.refuse(end.error);
    if (end.kind === 'ignore') return;
    if (this.mode === 'text') this.phase = 'finished';
    const t0 = performance.now();
    this.enqueue(() => this.voiceTurn(utterance, t0));
  }

  private enqueue(turn: () => Promise<void>): void {
    this.pending++;
    this.chain = this.chain
      .then(turn)
      .catch((err) => {
        if (this.wire.closed) return;
        this.emu.logger.error({ err }, 'conversation turn failed');
        this.fail('INTERNAL', 'internal error while answering', CLOSE_FAULT);
      })
      .finally(() => {
        this.pending--;
        if (!this.wire.closed) this.onTurnEnd();
      });
  }

  private async voiceTurn(utterance: Utterance, t0: number): Promise<void> {
    if (this.wire.closed) return;
    this.busy = true;
    try {
      const latency = latencyProfile(this.emu);
      if (latency.asr) await sleep(latency.asr, undefined, { signal: this.wire.signal });
      const result = recognizeUtterance(this.emu, utterance);
      if (this.wire.closed) return;
      this.wire.send({ type: 'asr_final', asr_text: result.text });
      await this.answer(result.text, { t0, asrMs: Math.round(performance.now() - t0) });
    } finally {
      this.busy = false;
    }
  }

  private async answer(userText: string, clock: { t0: number; asrMs: number }): Promise<void> {
    if (this.wire.closed || !this.ctx || !this.session) return;
    countTurn(this.session);
    if (!userText.trim()) {
      // Nothing was understood: the turn ends without a reply.
      const elapsed = Math.round(performance.now() - clock.t0);
      this.wire.send({
        type: 'done',
        reply_text: '',
        first_token_ms: 0,
        first_audio_ms: 0,
        asr_ms: clock.asrMs,
        llm_ms: 0,
        tts_ms: 0,
        total_ms: elapsed,
        audio_duration_sec: 0,
      });
    } else {
      const { outcome, replyText } = await runReply(this.ctx, userText, clock);
      if (outcome === 'no_balance') return this.refuse(insufficientBalance('insufficient balance: the reply audio cannot be paid'));
      if (outcome === 'closed') return;
      recordTurn(this.emu, this.session, { user: userText, reply: replyText });
    }
    if (this.mode === 'text') this.wire.close(1000, 'turn finished');
  }
}

function eventName(msg: Record<string, unknown>): string {
  if (isFinalMessage(msg)) return 'is_final';
  if (typeof msg.type === 'string') return msg.type.slice(0, 32);
  return 'meta' in msg || 'voice_id' in msg || 'audio_format' in msg ? 'meta' : 'message';
}
