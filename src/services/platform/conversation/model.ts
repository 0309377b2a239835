import { createHash } from 'node:crypto';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { roles } from '../shared/roles.js';

/**
 * Rules of the conversation WebSockets, nothing of the wire: live sessions, roles, scripted replies,
 * billing, the latency profile and the mapping of injected faults to the sockets' error codes.
 */

export interface LiveSession {
  session_id: string;
  accountId: string;
  path: string;
  voice_id: string;
  language: string;
  /** Created by this socket (dropped when it closes) or named by the client's meta. */
  created_here: boolean;
  opened_at_ms: number;
  turns: number;
}

export interface ConversationState {
  live: Map<number, LiveSession>;
  counter: number;
}

/** The conversation area: sessions of open sockets. Nothing outlives its socket. */
export function conversationArea(emu: Emulator): ConversationState {
  const state: ConversationState = { live: new Map(), counter: 0 };
  emu.registerArea({
    name: 'conversation',
    // Sockets are closed by the emulator's reset; their close handlers drop their sessions.
    reset: (accountId) => {
      for (const [key, s] of state.live) if (accountId === undefined || s.accountId === accountId) state.live.delete(key);
    },
    view: (accountId) => ({
      live_sessions: [...state.live.values()]
        .filter((s) => s.accountId === accountId)
        .map(({ accountId: _a, ...rest }) => rest),
    }),
  });
  return state;
}

/** Registers a live session; returns the function that removes it. */
export function addLive(state: ConversationState, s: LiveSession): () => void {
  const key = ++state.counter;
  state.live.set(key, s);
  return () => state.live.delete(key);
}

/** A new session id of an account (seeded stream, so the same seed and requests give the same ids). */
export function newSessionId(emu: Emulator, account: Account): string {
  return `conv_${emu.ids.stream(account.id).hex(24)}`;
}

/** Roles are those of the REST sessions (one lookup for both). */
export { findRole, type Role } from '../shared/roles.js';

export function roleIds(emu: Emulator): string[] {
  return roles(emu).map((r) => r.id);
}

/** `zh` when the text holds Han characters, else `en`; `fallback` for an empty text. */
export function languageOf(text: string, fallback: string): string {
  if (!text.trim()) return fallback;
  return /\p{Script=Han}/u.test(text) ? 'zh' : 'en';
}

/**
 * The scripted reply: the first rule of `conversation.json` whose regex matches the user's text, else
 * a default of the text's language picked by a hash of the text (same text, same reply).
 */
export function chooseReply(emu: Emulator, userText: string, language: string): { text: string; language: string } {
  const fixture = emu.fixtures.data['conversation.json'];
  for (const rule of fixture.rules) {
    let re: RegExp;
    try {
      re = new RegExp(rule.match, rule.flags.includes('u') ? rule.flags : `${rule.flags}u`);
    } catch {
      continue; // a rule the user wrote wrong never matches
    }
    if (re.test(userText)) return { text: rule.reply, language: rule.language ?? languageOf(rule.reply, language) };
  }
  const lang = languageOf(userText, language);
  const sameLanguage = fixture.defaults.filter((d) => (d.language ?? languageOf(d.reply, 'en')) === lang);
  const pool = sameLanguage.length ? sameLanguage : fixture.defaults;
  const pick = pool[createHash('sha256').update(userText).digest().readUInt32BE(0) % pool.length]!;
  return { text: pick.reply, language: pick.language ?? languageOf(pick.reply, lang) };
}

/** Reply text as tokens: one Unicode code point each (`first_token` + `llm_token`s = `reply_text`). */
export function tokensOf(text: string): string[] {
  return [...text];
}

/** Micro-units for `seconds` of reply audio. */
export function conversationPrice(emu: Emulator, seconds: number): number {
  return Math.round(emu.fixtures.data['billing.json'].prices_micro.conversation_audio_second * seconds);
}

/** Micro-units for `seconds` of recognized audio (recognition stream). */
export function recognitionPrice(emu: Emulator, seconds: number): number {
  return Math.round(emu.fixtures.data['billing.json'].prices_micro.recognition_audio_second * seconds);
}

/**
 * Added delays of `EMULATOR_LATENCY=realistic` (ms); `none` adds nothing. They imitate the real
 * service's processing (first character well under its stated 3 s) and show up in the timing fields.
 */
export interface LatencyProfile {
  asr: number;
  llmFirstToken: number;
  perToken: number;
  ttsFirstAudio: number;
}

export function latencyProfile(emu: Emulator): LatencyProfile {
  return emu.config.latency === 'realistic'
    ? { asr: 250, llmFirstToken: 600, perToken: 20, ttsFirstAudio: 350 }
    : { asr: 0, llmFirstToken: 0, perToken: 0, ttsFirstAudio: 0 };
}

const GRPC_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  16: 'UNAUTHENTICATED',
};

/** Codes of the spec's call table keep their digits as the string code. */
const CALL_CODES = new Set([20001, 20003, 40011, 40012, 40013]);

/**
 * String `code` of an injected `code=N` fault on a conversation socket: the call table's codes as
 * digits, 50000/10000/1000 → INTERNAL, timeouts (10006, 1001) → DEADLINE_EXCEEDED, rate limits
 * (10014, 10005, 1002) → RESOURCE_EXHAUSTED, gRPC numbers 1–16 → their names, anything else → digits.
 */
export function faultCodeString(code: number): string {
  if (CALL_CODES.has(code)) return String(code);
  if (code === 50000 || code === 10000 || code === 1000) return 'INTERNAL';
  if (code === 10006 || code === 1001) return 'DEADLINE_EXCEEDED';
  if (code === 10014 || code === 10005 || code === 1002) return 'RESOURCE_EXHAUSTED';
  return GRPC_NAMES[code] ?? String(code);
}

/** String `code` of an injected `status=N` fault on a conversation socket. */
export function faultStatusString(status: number): string {
  if (status === 400) return '20003';
  if (status === 401 || status === 403) return '20001';
  if (status === 402) return '40011';
  if (status === 408 || status === 504) return 'DEADLINE_EXCEEDED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}
