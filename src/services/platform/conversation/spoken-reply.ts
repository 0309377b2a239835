/**
 * One reply of a conversation turn: scripted reply text, its tokens, the reply audio synthesized
 * with the role's voice and streamed as MP3 frames while it is encoded, billing, and `done`.
 */
import { canPay, charge } from '../../shared/charges.js';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeAudioStream, synthesizeStreamSliced } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { REPLY_SAMPLE_RATE, replySynthInput, settleReply } from '../shared/conversation-turn.js';
import { chooseReply, conversationPrice, latencyProfile, tokensOf, type Role } from './model.js';
import type { TurnTimings } from './schema.js';
import type { Wire } from '../shared/socket-wire.js';

export { REPLY_SAMPLE_RATE, replySynthInput };
export const REPLY_BITRATE = 64_000;
/** Margin added to the planned PCM length for the balance check: MP3 decoders see the encoder delay and padding. */
const MP3_MARGIN_MS = 120;

export interface ReplyContext {
  emu: Emulator;
  account: Account;
  wire: Wire;
  role: Role;
  /** `zh`/`en` of the session (meta `language`, else the role's). */
  language: string;
  /** stream-text: every character after the first goes out as an `llm_token`. */
  tokenEvents: boolean;
}

export interface TurnClock {
  /** performance.now() when the user's input was complete (utterance end, or meta with text). */
  t0: number;
  /** ms from t0 to `asr_final` (0 in text mode). */
  asrMs: number;
}

export type ReplyOutcome = 'done' | 'closed' | 'no_balance';

const since = (t: number) => Math.round(performance.now() - t);

export async function runReply(ctx: ReplyContext, userText: string, clock: TurnClock): Promise<{ outcome: ReplyOutcome; replyText: string }> {
  const { emu, account, wire } = ctx;
  const latency = latencyProfile(emu);
  const signal = wire.signal;
  const llmStart = performance.now();
  const reply = chooseReply(emu, userText, ctx.language);
  const synth = await synthesizeStreamSliced(replySynthInput(reply.text, ctx.role, emu.config.voiceEngine), { signal });

  // The reply's length is known from the synthesis plan: refuse before anything is said.
  const plannedSec = (synth.durationMs + MP3_MARGIN_MS) / 1000;
  if (!canPay(emu, account, conversationPrice(emu, plannedSec))) return { outcome: 'no_balance', replyText: reply.text };

  const tokens = tokensOf(reply.text);
  if (latency.llmFirstToken) await sleep(latency.llmFirstToken, undefined, { signal });
  if (wire.closed) return { outcome: 'closed', replyText: reply.text };
  wire.send({ type: 'llm_first_token', first_token: tokens[0] ?? '' });
  const firstTokenMs = since(clock.t0);
  if (ctx.tokenEvents) {
    for (const token of tokens.slice(1)) {
      if (latency.perToken) await sleep(latency.perToken, undefined, { signal });
      if (wire.closed) return { outcome: 'closed', replyText: reply.text };
      wire.send({ type: 'llm_token', token });
    }
  }
  const llmMs = since(llmStart);

  const ttsStart = performance.now();
  // The reply's synthesis is an audio stream of its own: its `ttfa_ms` (the fault's, the account's or
  // the `--latency realistic` profile's) counts from now, and the guard paces it; the journal's time to
  // first audio counts from the end of the user's input.
  wire.beginAnswer(true, clock.t0);
  const encoded = encodeAudioStream('mp3', wire.shaping.audioSource(synth, REPLY_SAMPLE_RATE, 1), {
    sampleRate: REPLY_SAMPLE_RATE,
    channels: 1,
    bitrate: REPLY_BITRATE,
  });
  // Every MP3 chunk leaves as a binary frame through the socket's guard, in one call. At a constant bit
  // rate a chunk's bytes say how much audio it carries (the pace counts it).
  if (!(await wire.sendEncodedAudio(encoded, { bitrate: REPLY_BITRATE }, 'audio'))) return { outcome: 'closed', replyText: reply.text };
  const firstAudioAt = wire.firstAudioAt;
  const firstAudioMs = firstAudioAt === null ? -1 : Math.round(firstAudioAt - clock.t0);
  wire.answerEnded();
  const meta = await encoded.meta();
  const ttsMs = since(ttsStart);
  const audioSec = Math.round(meta.durationMs) / 1000;

  settleReply(emu, account, { text: reply.text, language: reply.language, voiceId: ctx.role.voice_id, summary: synth, seconds: audioSec });

  const timings: TurnTimings = {
    first_token_ms: firstTokenMs,
    first_audio_ms: Math.max(0, firstAudioMs),
    asr_ms: clock.asrMs,
    llm_ms: llmMs,
    tts_ms: ttsMs,
    total_ms: since(clock.t0),
  };
  if (wire.closed) return { outcome: 'closed', replyText: reply.text };
  wire.send({ type: 'done', reply_text: reply.text, ...timings, audio_duration_sec: audioSec });
  return { outcome: 'done', replyText: reply.text };
}
