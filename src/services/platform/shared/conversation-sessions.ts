/**
 * REST conversation sessions as data: a voice (role) plus the turns spoken so far. Three areas read
 * them: `sessions/` creates and deletes them (its rules), the conversation WebSockets append turns,
 * and a call started with `previous_session_id` copies them (see docs/platform-sessions.md).
 */
import type { Emulator, StateArea } from '../../../core/emulator.js';
import * as z from 'zod';
import { areaOf, checkWith, listRecords, recordViews } from '../../../core/state/areas.js';

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

/** Turns kept per session: enough context for scripted replies, bounded for long runs. */
export const MAX_TURNS = 50;

/** The area's name: also the key of its part of a saved snapshot (kept as it was). */
export const CONVERSATION_SESSIONS = 'conversation_sessions';
const AREA = CONVERSATION_SESSIONS;

interface SessionArea extends StateArea {
  sessions: Map<string, ConversationSession>;
  /** The same sessions by account, each in creation order: a write's rules cost its account, not every session. */
  byAccount: Map<string, Map<string, ConversationSession>>;
}

/** The saved part's schema: it names the field when the plain check below is not sure. */
const checkSessions = checkWith(
  z.array(
    z.looseObject({
      sessionId: z.string().min(1),
      accountId: z.string().min(1),
      voiceId: z.string(),
      createdAtMs: z.number(),
      turns: z.array(z.looseObject({ user: z.string(), reply: z.string() })),
    }),
  ),
);

const text = (v: unknown, min = 0): boolean => typeof v === 'string' && v.length >= min;

/**
 * True only for a part the schema surely accepts, in plain code: zod's interpreted check of 100,000
 * saved sessions was a sixth of a start's CPU. Anything else goes to the schema, which names the field.
 */
function surelySessions(data: unknown): boolean {
  if (!Array.isArray(data)) return false;
  for (const s of data as unknown[]) {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) return false;
    const r = s as Record<string, unknown>;
    if (!text(r.sessionId, 1) || !text(r.accountId, 1) || !text(r.voiceId) || !Number.isFinite(r.createdAtMs) || !Array.isArray(r.turns)) return false;
    for (const t of r.turns as unknown[]) {
      if (typeof t !== 'object' || t === null || Array.isArray(t)) return false;
      if (!text((t as Turn).user) || !text((t as Turn).reply)) return false;
    }
  }
  return true;
}

function createArea(): SessionArea {
  const sessions = new Map<string, ConversationSession>();
  const byAccount = new Map<string, Map<string, ConversationSession>>();
  return {
    name: AREA,
    sessions,
    byAccount,
    reset(accountId) {
      if (accountId === undefined) {
        sessions.clear();
        byAccount.clear();
        return;
      }
      for (const id of byAccount.get(accountId)?.keys() ?? []) sessions.delete(id);
      byAccount.delete(accountId);
    },
    ...recordViews(
      () => sessions.values(),
      (session) => session.accountId,
      (session) => ({ session_id: session.sessionId, voice_id: session.voiceId, created_at_ms: session.createdAtMs, turns: session.turns.length }),
    ),
    save: () => [...sessions.values()],
    records: listRecords<ConversationSession>(
      (s) => s.sessionId,
      (s) => s.accountId,
      { one: (id) => sessions.get(id), ofAccount: (accountId) => byAccount.get(accountId)?.values() ?? [] },
    ),
    check: (data) => (surelySessions(data) ? null : checkSessions(data)),
    load(data) {
      sessions.clear();
      byAccount.clear();
      // A saved part is always freshly parsed (rows or a snapshot file): its objects are kept as read, not copied.
      for (const session of (data as ConversationSession[]) ?? []) put(sessions, byAccount, session);
    },
  };
}

function put(sessions: Map<string, ConversationSession>, byAccount: SessionArea['byAccount'], session: ConversationSession): void {
  const previous = sessions.get(session.sessionId);
  if (previous && previous.accountId !== session.accountId) byAccount.get(previous.accountId)?.delete(session.sessionId);
  sessions.set(session.sessionId, session);
  let mine = byAccount.get(session.accountId);
  if (!mine) byAccount.set(session.accountId, (mine = new Map()));
  mine.set(session.sessionId, session);
}

/** Every session of every account, read-only (add and remove them with the functions below). */
export function conversationSessions(emu: Emulator): ReadonlyMap<string, ConversationSession> {
  return areaOf(emu, AREA, createArea).sessions;
}

/** Keeps a session (a new one goes last in its account's creation order). */
export function addSession(emu: Emulator, session: ConversationSession): void {
  const area = areaOf(emu, AREA, createArea);
  put(area.sessions, area.byAccount, session);
}

/** Forgets a session by id (nothing when there is none). */
export function removeSession(emu: Emulator, sessionId: string): void {
  const area = areaOf(emu, AREA, createArea);
  const session = area.sessions.get(sessionId);
  if (!session) return;
  area.sessions.delete(sessionId);
  const mine = area.byAccount.get(session.accountId);
  mine?.delete(sessionId);
  if (mine?.size === 0) area.byAccount.delete(session.accountId);
}

/** One account's sessions, oldest first (a view: copy it before removing any). */
export function sessionsOfAccount(emu: Emulator, accountId: string): ReadonlyMap<string, ConversationSession> {
  return areaOf(emu, AREA, createArea).byAccount.get(accountId) ?? new Map();
}

/** A session of this account, or undefined (another account's sessions are invisible). */
export function getSession(emu: Emulator, accountId: string, sessionId: string): ConversationSession | undefined {
  const session = conversationSessions(emu).get(sessionId);
  return session && session.accountId === accountId ? session : undefined;
}

/** Records one spoken turn (used by the conversation WebSockets); keeps the last MAX_TURNS. */
export function appendTurn(emu: Emulator, accountId: string, sessionId: string, turn: Turn): void {
  const session = getSession(emu, accountId, sessionId);
  if (!session) return;
  session.turns.push({ user: turn.user, reply: turn.reply });
  if (session.turns.length > MAX_TURNS) session.turns.splice(0, session.turns.length - MAX_TURNS);
  emu.markDirty(AREA, accountId, sessionId);
}
