/**
 * The bot's conversation: it listens to the user's continuous microphone, ends an utterance as the
 * conversation socket does (SILENCE_END_MS of silence after voice, or PAUSE_MS on the emulator clock
 * without any audio), recognises it, says the scripted reply, and stops talking when the user talks
 * over it. One turn at a time, in order. Agent states: `listening` → `thinking` (an utterance ended:
 * recognising and replying) → `speaking` (the first frame of the reply left) → `listening`.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { accountId, type Account } from '../../../../core/state/accounts.js';
import type { Emulator } from '../../../../core/emulator.js';
import type { SignatureRecord } from '../../../../core/state/signatures.js';
import { chooseReply, conversationPrice, endedBySilence, keepSpokenRecord, latencyProfile, PAUSE_MS, settleReply } from '../../shared/conversation-turn.js';
import {
  appendPcm,
  durationMs,
  INPUT_RATE,
  MAX_UTTERANCE_MS,
  newUtterance,
  nextPartial,
  recognizeUtterance,
  revealed,
  samplesOf,
  type Utterance,
} from '../../shared/utterance.js';
import { Downsampler } from './downsample.js';
import type { AgentState, BotOutput, RoomBot, RoomBotOptions } from './types.js';
import { personaOf, type Persona } from './persona.js';
import { Speaker, trackShape, type Spoken } from './speaker.js';
import { Witness, type TurnNote } from './witness.js';

/**
 * Barge-in: this much voice in a row (20 ms windows over about −40 dBFS, the utterance detector's)
 * while the bot is replying stops its reply. The frame waiting for its time is not sent: no frame
 * leaves once the voice reached this length (within 100 ms of its start at real time).
 */
export const BARGE_IN_VOICE_MS = 60;
/** Before any voice, only this much of the silence heard is kept in front of the utterance. */
const PREROLL_MS = 500;

/**
 * The user's interim transcription is looked at after every this much new audio (the sockets' partials
 * look every 200 ms; each look recognises the whole utterance so far, and a room hears continuously).
 */
const INTERIM_EVERY_MS = 500;

const PREROLL_SAMPLES = (PREROLL_MS * INPUT_RATE) / 1000;
const INTERIM_SAMPLES = (INTERIM_EVERY_MS * INPUT_RATE) / 1000;
const BARGE_IN_SAMPLES = (BARGE_IN_VOICE_MS * INPUT_RATE) / 1000;

export class ConversingBot implements RoomBot {
  private readonly account: Account;
  private readonly persona: Persona;
  private readonly speaker: Speaker;
  private readonly witness: Witness;
  private readonly ended = new AbortController();
  private readonly downsampler = new Downsampler();
  private utterance: Utterance = newUtterance();
  /** The user's transcription segment of the utterance being heard (made at its first partial). */
  private userSegment: string | null = null;
  private state: AgentState | null = null;
  private closed = false;
  /** The reply (or greeting) in progress, and its stop. */
  private current: AbortController | null = null;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private pauseTimer: number | null = null;
  /** Emulator-clock time of the last audio after voice (the pause rule). */
  private lastAudioAt = 0;

  constructor(
    private readonly emu: Emulator,
    private readonly opts: RoomBotOptions,
    private readonly out: BotOutput,
  ) {
    // The room knows its session's account by id (sessions keep no key); a key is also taken.
    const account = emu.accounts.byId(opts.accountKey) ?? emu.accounts.byId(accountId(opts.accountKey)) ?? emu.accounts.peek(opts.accountKey);
    if (!account) throw new Error("room bot: the session's account key is not an account of this emulator");
    this.account = account;
    this.persona = personaOf(emu, opts);
    this.witness = new Witness(emu, opts.entry ?? null);
    this.speaker = new Speaker(emu, {
      entry: opts.entry ?? null,
      shape: trackShape(emu, account, opts.fault),
      cutAfterChunks: opts.fault?.cut_after_chunks,
      gone: this.ended.signal,
      seed: opts.entry?.id ?? opts.sessionId,
      send: (frame) => {
        if (this.closed) return false;
        this.out.audioFrame(frame);
        this.witness.said(frame);
        return true;
      },
      // The guard notes the cut itself (`connection cut after N chunks (fault)`).
      dropped: () => this.drop(),
    });
    this.setState('listening');
  }

  greet(): void {
    if (this.closed) return;
    this.enqueue(async (stop) => {
      // `close_ws`: the room drops as the bot is about to speak its first word.
      if (this.opts.fault?.close_ws !== undefined) return this.drop(`room dropped before the greeting (fault close_ws=${this.opts.fault.close_ws})`);
      const text = this.persona.greeting;
      const spoken = await this.say(text, this.persona.language, stop);
      this.witness.turn({ kind: 'greeting', reply: text, ...spokenNote(spoken) });
    });
  }

  userAudio(frame: Int16Array): void {
    if (this.closed || frame.length === 0) return;
    this.witness.heard(frame);
    const pcm = this.downsampler.push(frame);
    if (pcm.length === 0) return;
    let u = this.utterance;
    appendPcm(u, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    if (!u.heardVoice) {
      // Silence before any voice: only the last PREROLL_MS is kept in front of the utterance.
      if (u.samples >= 2 * PREROLL_SAMPLES) this.utterance = u = preroll(u);
      return;
    }
    if (this.current && u.voicedRun >= BARGE_IN_SAMPLES) this.bargeIn();
    const partial = u.samples - u.lastPartialAt >= INTERIM_SAMPLES ? nextPartial(this.emu, u) : null;
    if (partial) this.out.transcription({ speaker: 'user', segmentId: (this.userSegment ??= this.newSegment()), text: partial.text, final: false });
    if (endedBySilence(u) || durationMs(u) >= MAX_UTTERANCE_MS) return this.endUtterance();
    this.lastAudioAt = this.emu.clock.now();
    this.pauseTimer ??= this.emu.clock.after(PAUSE_MS, () => this.pauseCheck(), 'room bot utterance pause', this.account.id);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ended.abort(new Error('room closed'));
    this.current?.abort();
    this.emu.clock.cancel(this.pauseTimer);
    this.pauseTimer = null;
    this.witness.flush();
  }

  /** The pause rule: PAUSE_MS on the emulator clock with no audio after voice ends the utterance. */
  private pauseCheck(): void {
    this.pauseTimer = null;
    if (this.closed || !this.utterance.heardVoice) return;
    const left = this.lastAudioAt + PAUSE_MS - this.emu.clock.now();
    if (left > 0) this.pauseTimer = this.emu.clock.after(left, () => this.pauseCheck(), 'room bot utterance pause', this.account.id);
    else this.endUtterance();
  }

  private endUtterance(): void {
    this.emu.clock.cancel(this.pauseTimer);
    this.pauseTimer = null;
    const u = this.utterance;
    const segment = this.userSegment;
    this.utterance = newUtterance();
    this.userSegment = null;
    if (u.samples === 0 || !u.heardVoice) return;
    // While an earlier reply still plays (voice too short to cut it), the state stays `speaking`.
    if (this.pending === 0) this.setState('thinking');
    // The reply's time to first audio counts from here (wall time): the end of the user's utterance.
    const endedAt = performance.now();
    this.enqueue((stop) => this.answer(u, segment, stop, endedAt));
  }

  /** Recognition, the scripted reply, its audio; the turn is kept and charged as the socket's. */
  private async answer(u: Utterance, segment: string | null, stop: AbortSignal, endedAt: number): Promise<void> {
    this.setState('thinking');
    const latency = latencyProfile(this.emu);
    if (latency.asr) await sleep(latency.asr, undefined, { signal: stop });
    const heard = recognizeUtterance(this.emu, u);
    if (!heard.text.trim()) return; // nothing understood: no reply
    this.out.transcription({ speaker: 'user', segmentId: segment ?? this.newSegment(), text: heard.text, final: true });
    const reply = chooseReply(this.emu, heard.text, this.persona.language);
    if (latency.llmFirstToken) await sleep(latency.llmFirstToken, undefined, { signal: stop });
    if (stop.aborted) return;
    const spoken = await this.say(reply.text, reply.language, stop, true, endedAt);
    this.witness.turn({ kind: 'reply', user: heard.text, reply: reply.text, ...spokenNote(spoken) });
    if (spoken.ms > 0) this.opts.onTurn?.({ user: heard.text, reply: spoken.said });
  }

  /**
   * Says `text`: its transcription grows as its audio leaves (up to the sentence times of its
   * signature record) and is final when it ends or is cut. A reply (`paid`) is refused when the balance
   * cannot pay for its planned audio, and charged for the audio sent.
   */
  private async say(text: string, language: string, stop: AbortSignal, paid = false, from?: number): Promise<Spoken & { said: string; unpaid?: true }> {
    const synth = this.speaker.synthesis(text, this.persona.voiceId, AbortSignal.any([stop, this.ended.signal]));
    if (paid && !this.emu.accounts.canAfford(this.account, conversationPrice(this.emu, synth.durationMs / 1000))) {
      return { outcome: 'stopped', ms: 0, said: '', unpaid: true };
    }
    // Kept before the first frame: a client may hear (and the emulator recognise) the audio as it plays.
    const record: SignatureRecord = keepSpokenRecord(this.emu, { text, language, voiceId: this.persona.voiceId, summary: synth });
    const segmentId = this.newSegment();
    let shown = '';
    const spoken = await this.speaker.speak(synth, {
      stop,
      from,
      first: () => this.setState('speaking'),
      progress: (ms) => {
        const now = revealed(text.trim(), ms, record);
        if (now.length <= shown.length) return;
        shown = now;
        if (now !== text.trim()) this.out.transcription({ speaker: 'bot', segmentId, text: now, final: false });
      },
    });
    const said = spoken.outcome === 'done' ? text.trim() : shown;
    if (!this.closed && (spoken.ms > 0 || spoken.outcome === 'done')) this.out.transcription({ speaker: 'bot', segmentId, text: said, final: true });
    this.witness.flush();
    if (paid && spoken.ms > 0)
      settleReply(this.emu, this.account, { text, language, voiceId: this.persona.voiceId, summary: synth, seconds: spoken.ms / 1000 });
    return { ...spoken, said };
  }

  /** The user talks over the bot: its reply stops at once, and the journal times the cut. */
  private bargeIn(): void {
    const current = this.current;
    if (!current || current.signal.aborted) return;
    current.abort();
    this.speaker.cancelled();
  }

  /** Turns run one after another; each has its own stop (a barge-in, or the room's end). */
  private enqueue(turn: (stop: AbortSignal) => Promise<void>): void {
    this.pending++;
    this.chain = this.chain
      .then(async () => {
        if (this.closed) return;
        const current = new AbortController();
        this.current = current;
        try {
          await turn(AbortSignal.any([current.signal, this.ended.signal]));
        } finally {
          if (this.current === current) this.current = null;
        }
      })
      .catch((err: unknown) => {
        if (this.closed || (err as Error)?.name === 'AbortError') return;
        this.emu.logger.error({ err }, 'room bot turn failed');
      })
      .finally(() => {
        this.pending--;
        if (!this.closed && this.pending === 0) this.setState('listening');
      });
  }

  /** The room is dropped by a fault: the room is asked to end, and the bot stops. */
  private drop(note?: string): void {
    if (this.closed) return;
    if (note) this.witness.note(note);
    this.out.end('fault');
    this.close();
  }

  private setState(state: AgentState): void {
    if (this.closed || this.state === state) return;
    this.state = state;
    this.out.agentState(state);
  }

  /** A transcription segment id from the account's seeded id stream (same seed and input, same ids). */
  private newSegment(): string {
    const id = `SG_${this.emu.ids.stream(this.account.id).hex(12)}`;
    this.emu.markDirty('ids', null, this.account.id);
    return id;
  }
}

function spokenNote(spoken: Spoken & { unpaid?: true }): Pick<TurnNote, 'spoken_ms' | 'cut' | 'unpaid'> {
  return {
    spoken_ms: spoken.ms,
    ...(spoken.outcome === 'stopped' && !spoken.unpaid ? { cut: true as const } : {}),
    ...(spoken.unpaid ? { unpaid: true as const } : {}),
  };
}

/** A silent utterance cut down to its last PREROLL_MS. */
function preroll(u: Utterance): Utterance {
  const fresh = newUtterance();
  const tail = samplesOf(u).slice(u.samples - PREROLL_SAMPLES);
  appendPcm(fresh, Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength));
  return fresh;
}
