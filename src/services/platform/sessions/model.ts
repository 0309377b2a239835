import type { Account } from '../../../core/accounts.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';

/**
 * REST conversation sessions (`/api/v1/audio/sessions`) and the roles they talk with. A session is a
 * voice (role) plus the turns spoken so far; the conversation WebSockets append turns through
 * `appendTurn`, and a call started with `previous_session_id` copies them (see docs/platform-sessions.md).
 */
export interface Turn {
  user: string;
  reply: string;
}

export interface ConversationSession {
  sessionId: string;
  accountId: string;
  voiceId: string;
  createdAtMs: number;
  turns: Turn[];
}

export interface Role {
  id: string;
  name: string;
  language: string;
  description: string;
  voice_id: string;
}

interface SessionStore {
  sessions: Map<string, ConversationSession>;
}

interface SessionArea extends StateArea {
  store: SessionStore;
}

const AREA = 'conversation_sessions';
/** Turns kept per session: enough context for scripted replies, bounded for long runs. */
export const MAX_TURNS = 50;
/** Sessions kept per account; the oldest go first. */
const MAX_PER_ACCOUNT = 500;

/** The store of one emulator, registered on first use (reset, state view and persistence go through it). */
function store(emu: Emulator): SessionStore {
  const found = emu.areas.get(AREA) as SessionArea | undefined;
  if (found) return found.store;
  const s: SessionStore = { sessions: new Map() };
  const area: SessionArea = {
    name: AREA,
    store: s,
    reset(accountId) {
      for (const [id, x] of s.sessions) if (accountId === undefined || x.accountId === accountId) s.sessions.delete(id);
    },
    view(accountId) {
      return [...s.sessions.values()]
        .filter((x) => x.accountId === accountId)
        .map((x) => ({ session_id: x.sessionId, voice_id: x.voiceId, created_at_ms: x.createdAtMs, turns: x.turns.length }));
    },
    save: () => [...s.sessions.values()],
    load(data) {
      s.sessions.clear();
      for (const x of (data as ConversationSession[]) ?? []) s.sessions.set(x.sessionId, { ...x, turns: [...x.turns] });
    },
  };
  emu.registerArea(area);
  return s;
}

/** Registers the area at start-up, so a snapshot finds it before the first request. */
export function registerSessions(emu: Emulator): void {
  store(emu);
}

export function roles(emu: Emulator): Role[] {
  return emu.fixtures.data['roles.json'];
}

export function findRole(emu: Emulator, id: string): Role | undefined {
  return roles(emu).find((r) => r.id === id);
}

/** The role of a `voice_id`/`timbre` field, or the param error naming the field. */
export function requireRole(emu: Emulator, id: string, field: string): Role {
  const role = findRole(emu, id);
  if (!role) throw new PlatformError('param', `${field}: unknown role "${id}"; the roles are listed by GET /api/v1/audio/characters`);
  return role;
}

export function createSession(emu: Emulator, account: Account, voiceId: string): ConversationSession {
  const s = store(emu);
  requireRole(emu, voiceId, 'voice_id');
  const session: ConversationSession = {
    sessionId: `sess_${emu.ids.stream(account.id).hex(24)}`,
    accountId: account.id,
    voiceId,
    createdAtMs: emu.clock.now(),
    turns: [],
  };
  s.sessions.set(session.sessionId, session);
  const mine = [...s.sessions.values()].filter((x) => x.accountId === account.id);
  for (const old of mine.slice(0, Math.max(0, mine.length - MAX_PER_ACCOUNT))) s.sessions.delete(old.sessionId);
  emu.markDirty();
  return session;
}

/** A session of this account, or undefined (another account's sessions are invisible). */
export function getSession(emu: Emulator, accountId: string, sessionId: string): ConversationSession | undefined {
  const x = store(emu).sessions.get(sessionId);
  return x && x.accountId === accountId ? x : undefined;
}

/** Deletes a session of this account; true also when there was none (the spec's rule). */
export function deleteSession(emu: Emulator, accountId: string, sessionId: string): true {
  const s = store(emu);
  const x = s.sessions.get(sessionId);
  if (x && x.accountId === accountId) {
    s.sessions.delete(sessionId);
    emu.markDirty();
  }
  return true;
}

/** Records one spoken turn (used by the conversation WebSockets); keeps the last MAX_TURNS. */
export function appendTurn(emu: Emulator, accountId: string, sessionId: string, turn: Turn): void {
  const x = getSession(emu, accountId, sessionId);
  if (!x) return;
  x.turns.push({ user: turn.user, reply: turn.reply });
  if (x.turns.length > MAX_TURNS) x.turns.splice(0, x.turns.length - MAX_TURNS);
  emu.markDirty();
}
