import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { takeFault } from '../../../core/http.js';
import { appendPcm, durationMs, MAX_UTTERANCE_MS, newUtterance, nextPartial, recognizeUtterance, trailingSilenceMs, type Utterance } from './listen.js';
import { appendTurn, getSession } from '../shared/conversation-sessions.js';
import {
  addLive,
  faultCodeString,
  faultStatusString,
  findRole,
  latencyProfile,
  newSessionId,
  roleIds,
  type ConversationState,
  type LiveSession,
  type Role,
} from './model.js';
import { isFinalMessage, issueText, parseJsonObject, streamMetaSchema, textMetaSchema, unwrapMeta } from './schema.js';
import { runReply, type ReplyContext } from './turn.js';
import { openWire, type Wire } from './wire.js';

/**
 * The two conversation sockets. `/stream`: meta, then utterances of PCM16, each ended by
 * `{is_final:true}`, by PAUSE_MS without audio (emulator clock) or by SILENCE_END_MS of trailing
 * silence in the audio; one reply per utterance, several turns per connection. `/stream-text`: one
 * turn per connection, from `text_input` (text mode) or from one utterance (voice mode), then close.
 */
export const PAUSE_MS = 1500;
export const SILENCE_END_MS = 1000;

export type ConversationMode = 'stream' | 'text';

export const SOCKET_AUTH_TEXT = {
  missing: 'api_key query parameter is missing',
  invalid: 'api_key is not a valid API key',
  disabled: 'api_key belongs to a disabled API key',
} as const;

/** Close codes: 1008 after client errors (auth, parameters, balance), 1011 after service faults, 1000 after a finished turn. */
const CLOSE_POLICY = 1008;
const CLOSE_FAULT = 1011;

export function conversationSocket(emu: Emulator, state: ConversationState, socket: WebSocket, req: FastifyRequest, mode: ConversationMode): void {
  const wire = openWire(emu, socket, req, takeFault(req, 'cut_after_chunks'));
  const fail = (code: string, message: string, closeCode = CLOSE_POLICY) => {
    wire.send({ type: 'error', code, message });
    wire.close(closeCode, message);
  };

  // Order of checks (design.md): fault directives, key, capability, parameters, balance.
  const closeWs = takeFault(req, 'close_ws');
  if (closeWs !== undefined) return wire.close(closeWs, 'injected fault: close_ws');
  const code = takeFault(req, 'code');
  if (code !== undefined) return fail(faultCodeString(code), `injected fault: error ${code}`, CLOSE_FAULT);
  const status = takeFault(req, 'status');
  if (status !== undefined) return fail(faultStatusString(status), `injected fault: HTTP ${status}`, CLOSE_FAULT);
  const account = req.emu.account;
  if (!account) return fail('20001', SOCKET_AUTH_TEXT[req.emu.accountProblem ?? 'missing']);
  if (!emu.accounts.has(account, 'calls')) return fail('20001', 'this API key lacks the calls capability');

  const conv = new Conversation(emu, state, account, wire, mode, fail);
  socket.on('message', (data: RawData, isBinary: boolean) => {
    try {
      conv.onMessage(toBuffer(data), isBinary);
    } catch (err) {
      emu.logger.error({ err }, 'conversation socket failed');
      fail('INTERNAL', 'internal error while handling a message', CLOSE_FAULT);
    }
  });
}

export function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
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
    const parsed = parseJsonObject(data.toString('utf8'));
    this.wire.recordIn(data.length, false, parsed.ok ? eventName(parsed.value) : 'invalid');
    if (!parsed.ok) return this.fail('20003', parsed.message);
    if (this.phase === 'meta') return this.onMeta(parsed.value);
    if (isFinalMessage(parsed.value)) this.endUtterance(true);
    // Other JSON messages after meta are ignored (journaled only).
  }

  private onMeta(msg: Record<string, unknown>): void {
    if (isFinalMessage(msg)) return this.fail('20003', 'meta: the first message must be meta (voice_id, audio_format, language), not is_final');
    const inner = unwrapMeta(msg);
    const prefix = inner === msg ? '' : 'meta.';
    const parsed = (this.mode === 'text' ? textMetaSchema : streamMetaSchema).safeParse(inner);
    if (!parsed.success) return this.fail('20003', issueText(parsed.error, prefix));
    const meta = parsed.data as { session_id?: string | null; voice_id: string; language?: string | null; text_input?: string | null };
    const role = findRole(this.emu, meta.voice_id);
    if (!role) return this.fail('20003', `${prefix}voice_id: unknown role "${meta.voice_id}" (roles: ${roleIds(this.emu).join(', ')})`);
    if (!this.emu.accounts.canAfford(this.account, 0)) return this.fail('40011', 'insufficient balance: the conversation cannot start');

    // stream-text creates a round session per connection; /stream takes a REST session of this key
    // (POST /api/v1/audio/sessions) and records its turns there, or creates one for the connection.
    const given = this.mode === 'stream' && meta.session_id ? meta.session_id : null;
    if (given !== null && !getSession(this.emu, this.account.id, given))
      return this.fail('20003', `${prefix}session_id: no session "${given}" for this API key (create one with POST /api/v1/audio/sessions, or leave it out)`);
    const language = meta.language ?? role.language;
    this.session = {
      session_id: given ?? newSessionId(this.emu, this.account),
      accountId: this.account.id,
      path: this.mode === 'stream' ? '/api/v1/audio/conversation/stream' : '/api/v1/audio/conversation/stream-text',
      voice_id: role.id,
      language,
      created_here: given === null,
      opened_at_ms: this.emu.clock.now(),
      turns: 0,
    };
    this.wire.onClose(addLive(this.state, this.session));
    this.emu.markDirty();
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
    if (this.phase === 'meta') return this.fail('20003', 'binary audio arrived before the meta message');
    if (this.phase === 'finished') return; // text mode, or after the one turn of stream-text
    const u = this.utterance;
    appendPcm(u, data);
    if (durationMs(u) > MAX_UTTERANCE_MS) return this.fail('20003', `audio: an utterance may last at most ${MAX_UTTERANCE_MS / 1000} s`);
    if (!this.busy) {
      const partial = nextPartial(this.emu, u);
      if (partial) this.wire.send({ type: 'asr_partial', asr_text: partial.text });
    }
    if (this.mode !== 'stream') return;
    if (trailingSilenceMs(u) >= SILENCE_END_MS) return this.endUtterance(false);
    this.wire.cancel(this.pauseTimer);
    this.pauseTimer = this.wire.after(PAUSE_MS, () => this.endUtterance(false), 'conversation utterance pause');
  }

  /** Ends the current utterance: `{is_final}` (explicit) or the pause/silence rules. */
  private endUtterance(explicit: boolean): void {
    this.wire.cancel(this.pauseTimer);
    this.pauseTimer = null;
    const u = this.utterance;
    if (this.phase !== 'listening') return;
    if (u.samples === 0 || (!explicit && !u.heardVoice)) {
      // Nothing to answer: an is_final after an utterance that already ended by itself is ignored.
      if (this.mode === 'text' && explicit) this.fail('20003', 'is_final: no audio was received before it');
      this.utterance = newUtterance();
      return;
    }
    this.utterance = newUtterance();
    if (this.mode === 'text') this.phase = 'finished';
    const t0 = performance.now();
    this.enqueue(() => this.voiceTurn(u, t0));
  }

  private enqueue(turn: () => Promise<void>): void {
    this.chain = this.chain.then(turn).catch((err) => {
      if (this.wire.closed) return;
      this.emu.logger.error({ err }, 'conversation turn failed');
      this.fail('INTERNAL', 'internal error while answering', CLOSE_FAULT);
    });
  }

  private async voiceTurn(u: Utterance, t0: number): Promise<void> {
    if (this.wire.closed) return;
    this.busy = true;
    try {
      const latency = latencyProfile(this.emu);
      if (latency.asr) await sleep(latency.asr, undefined, { signal: this.wire.signal });
      const result = recognizeUtterance(this.emu, u);
      if (this.wire.closed) return;
      this.wire.send({ type: 'asr_final', asr_text: result.text });
      await this.answer(result.text, { t0, asrMs: Math.round(performance.now() - t0) });
    } finally {
      this.busy = false;
    }
  }

  private async answer(userText: string, clock: { t0: number; asrMs: number }): Promise<void> {
    if (this.wire.closed || !this.ctx || !this.session) return;
    this.session.turns += 1;
    if (!userText.trim()) {
      // Nothing was understood: the turn ends without a reply.
      const elapsed = Math.round(performance.now() - clock.t0);
      this.wire.send({ type: 'done', reply_text: '', first_token_ms: 0, first_audio_ms: 0, asr_ms: clock.asrMs, llm_ms: 0, tts_ms: 0, total_ms: elapsed, audio_duration_sec: 0 });
    } else {
      const { outcome, replyText } = await runReply(this.ctx, userText, clock);
      if (outcome === 'no_balance') return this.fail('40011', 'insufficient balance: the reply audio cannot be paid');
      if (outcome === 'closed') return;
      if (!this.session.created_here) appendTurn(this.emu, this.account.id, this.session.session_id, { user: userText, reply: replyText });
    }
    if (this.mode === 'text') this.wire.close(1000, 'turn finished');
  }
}

function eventName(msg: Record<string, unknown>): string {
  if (isFinalMessage(msg)) return 'is_final';
  if (typeof msg.type === 'string') return msg.type.slice(0, 32);
  return 'meta' in msg || 'voice_id' in msg || 'audio_format' in msg ? 'meta' : 'message';
}
