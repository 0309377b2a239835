/**
 * Rules of the conversation WebSockets, nothing of the wire: the meta rules that open a session, live
 * sessions, roles, scripted replies, billing and the latency profile. Refusals are ConversationError
 * (named constructors below); the socket sends them as `error` events.
 */
import { canPay } from '../../shared/charges.js';
import type { Account } from '../../../core/state/accounts.js';
import { areaOf } from '../../../core/state/areas.js';
import type { Emulator } from '../../../core/emulator.js';
import { findRole, roles, type Role } from '../shared/roles.js';
import { appendTurn, getSession } from '../shared/conversation-sessions.js';

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

/** The scripted reply, its price and the latency profile are the conversation turn's (shared with the call room's bot). */
export { chooseReply, conversationPrice, latencyProfile } from '../shared/conversation-turn.js';

/** Reply text as tokens: one Unicode code point each (`first_token` + `llm_token`s = `reply_text`). */
export function tokensOf(text: string): string[] {
  return [...text];
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
  if (!canPay(emu, account, 0)) throw insufficientBalance('insufficient balance: the conversation cannot start');

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

/** A turn began on the connection (understood or not): the session counts it. */
export function countTurn(session: LiveSession): void {
  session.turns += 1;
}

/** A finished turn is recorded in the REST session the client named; a session of the connection only counts it. */
export function recordTurn(emu: Emulator, session: LiveSession, turn: { user: string; reply: string }): void {
  if (!session.created_here) appendTurn(emu, session.accountId, session.session_id, turn);
}
