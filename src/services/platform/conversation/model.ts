/**
 * Rules of the conversation WebSockets, nothing of the wire: the meta rules that open a session, live
 * sessions, roles, scripted replies, billing and the latency profile. Refusals are ConversationError
 * (named constructors below); the socket sends them as `error` events.
 */
import { createHash } from 'node:crypto';
import type { Account } from '../../../core/state/accounts.js';
import { areaOf } from '../../../core/state/areas.js';
import { compilePattern } from '../../../core/state/patterns.js';
import type { Emulator } from '../../../core/emulator.js';
import { findRole, roles, type Role } from '../shared/roles.js';
import { appendTurn, getSession } from '../shared/conversation-sessions.js';
import { languageByAnyHan } from '../../shared/recognize.js';

export type ConversationMode = 'stream' | 'text';

/** A refusal of a conversation rule: the `code` string of the sockets' `error` event and its message. */
export class ConversationError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** 20003: a parameter of a message breaks a rule. */
export function badParameter(message: string): ConversationError {
  return new ConversationError('20003', message);
}

/** 40011: the balance cannot pay for what was asked. */
export function insufficientBalance(message: string): ConversationError {
  return new ConversationError('40011', message);
}

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

/** The conversation area: sessions of open sockets. Nothing outlives its socket (no save, no load). */
export function conversationArea(emu: Emulator): ConversationState {
  return areaOf(emu, 'conversation', () => {
    const state: ConversationState = { live: new Map(), counter: 0 };
    return {
      name: 'conversation',
      state,
      // Sockets are closed by the emulator's reset; their close handlers drop their sessions.
      reset: (accountId?: string) => {
        for (const [key, s] of state.live) if (accountId === undefined || s.accountId === accountId) state.live.delete(key);
      },
      view: (accountId: string) => ({
        live_sessions: [...state.live.values()].filter((s) => s.accountId === accountId).map(({ accountId: _a, ...rest }) => rest),
      }),
    };
  }).state;
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
export { findRole, type Role };

export function roleIds(emu: Emulator): string[] {
  return roles(emu).map((r) => r.id);
}

/**
 * The scripted reply: the first rule of `conversation.json` whose regex matches the user's text, else
 * a default of the text's language picked by a hash of the text (same text, same reply).
 */
export function chooseReply(emu: Emulator, userText: string, language: string): { text: string; language: string } {
  const fixture = emu.fixtures.data['conversation.json'];
  for (const rule of fixture.rules) {
    // Linear time whatever the pattern (core/state/patterns.ts); the fixture's check compiled it already.
    if (compilePattern(rule.match, rule.flags).test(userText)) return { text: rule.reply, language: rule.language ?? languageByAnyHan(rule.reply, language) };
  }
  const lang = languageByAnyHan(userText, language);
  const sameLanguage = fixture.defaults.filter((d) => (d.language ?? languageByAnyHan(d.reply)) === lang);
  const pool = sameLanguage.length ? sameLanguage : fixture.defaults;
  const pick = pool[createHash('sha256').update(userText).digest().readUInt32BE(0) % pool.length]!;
  return { text: pick.reply, language: pick.language ?? languageByAnyHan(pick.reply, lang) };
}

/** Reply text as tokens: one Unicode code point each (`first_token` + `llm_token`s = `reply_text`). */
export function tokensOf(text: string): string[] {
  return [...text];
}

/** Micro-units for `seconds` of reply audio. */
export function conversationPrice(emu: Emulator, seconds: number): number {
  return Math.round(emu.fixtures.data['billing.json'].prices_micro.conversation_audio_second * seconds);
}

/**
 * Added delays of `EMULATOR_LATENCY=realistic` (ms) before the text events; `none` adds nothing. They
 * imitate the real service's processing (first character well under its stated 3 s) and show up in
 * the timing fields. The reply audio is paced by the profile every audio stream has (REALISTIC_PACE
 * in core/stream/shaping.ts, through the socket's stream guard), counted from the reply's synthesis.
 */
export interface LatencyProfile {
  asr: number;
  llmFirstToken: number;
  perToken: number;
}

export function latencyProfile(emu: Emulator): LatencyProfile {
  return emu.config.latency === 'realistic' ? { asr: 250, llmFirstToken: 600, perToken: 20 } : { asr: 0, llmFirstToken: 0, perToken: 0 };
}

/** The meta message, as its schema typed it (conversation/schema.ts). */
export interface ConversationMeta {
  session_id?: string | null;
  voice_id: string;
  language?: string | null;
  text_input?: string | null;
}

export interface OpenedConversation {
  session: LiveSession;
  role: Role;
  language: string;
}

/**
 * The rules of a meta message, in order: the role must exist (20003), the balance must not be empty
 * (40011), and on `/stream` a named session must be a REST session of this key (20003); else a session
 * is created for the connection (stream-text always creates one). `prefix` names the fields as the
 * client wrote them (`meta.` when wrapped).
 */
export function openConversation(emu: Emulator, account: Account, mode: ConversationMode, meta: ConversationMeta, prefix: string): OpenedConversation {
  const role = findRole(emu, meta.voice_id);
  if (!role) throw badParameter(`${prefix}voice_id: unknown role "${meta.voice_id}" (roles: ${roleIds(emu).join(', ')})`);
  if (!emu.accounts.canAfford(account, 0)) throw insufficientBalance('insufficient balance: the conversation cannot start');

  // stream-text creates a round session per connection; /stream takes a REST session of this key
  // (POST /api/v1/audio/sessions) and records its turns there, or creates one for the connection.
  const given = mode === 'stream' && meta.session_id ? meta.session_id : null;
  if (given !== null && !getSession(emu, account.id, given))
    throw badParameter(`${prefix}session_id: no session "${given}" for this API key (create one with POST /api/v1/audio/sessions, or leave it out)`);
  const language = meta.language ?? role.language;
  const session: LiveSession = {
    session_id: given ?? newSessionId(emu, account),
    accountId: account.id,
    path: mode === 'stream' ? '/api/v1/audio/conversation/stream' : '/api/v1/audio/conversation/stream-text',
    voice_id: role.id,
    language,
    created_here: given === null,
    opened_at_ms: emu.clock.now(),
    turns: 0,
  };
  return { session, role, language };
}

/** A finished turn is recorded in the REST session the client named; a session of the connection only counts it. */
export function recordTurn(emu: Emulator, session: LiveSession, turn: { user: string; reply: string }): void {
  if (!session.created_here) appendTurn(emu, session.accountId, session.session_id, turn);
}
