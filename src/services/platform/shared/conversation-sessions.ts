/**
 * REST conversation sessions as data: a voice (role) plus the turns spoken so far. Three areas read
 * them: `sessions/` creates and deletes them (its rules), the conversation WebSockets append turns,
 * and a call started with `previous_session_id` copies them (see docs/platform-sessions.md).
 */
import type { Emulator, StateArea } from '../../../core/emulator.js';
import * as z from 'zod';
import { areaOf, checkWith, listRecords, recordViews } from '../../../core/areas.js';

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
}

function createArea(): SessionArea {
  const sessions = new Map<string, ConversationSession>();
  return {
    name: AREA,
    sessions,
    reset(accountId) {
      for (const [id, session] of sessions) if (accountId === undefined || session.accountId === accountId) sessions.delete(id);
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
      { one: (id) => sessions.get(id) },
    ),
    check: checkWith(
      z.array(
        z.looseObject({
          sessionId: z.string().min(1),
          accountId: z.string().min(1),
          voiceId: z.string(),
          createdAtMs: z.number(),
          turns: z.array(z.looseObject({ user: z.string(), reply: z.string() })),
        }),
      ),
    ),
    load(data) {
      sessions.clear();
      for (const session of (data as ConversationSession[]) ?? []) sessions.set(session.sessionId, { ...session, turns: [...session.turns] });
    },
  };
}

/** Every session of every account (the sessions area's rules add and prune them). */
export function conversationSessions(emu: Emulator): Map<string, ConversationSession> {
  return areaOf(emu, AREA, createArea).sessions;
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
