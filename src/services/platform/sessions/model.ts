/**
 * REST conversation sessions (`/api/v1/audio/sessions`). The sessions themselves are kept in
 * `shared/conversation-sessions.ts` (the conversation WebSockets add turns to them, calls copy them);
 * here are the rules of creating and deleting them (see docs/platform-sessions.md).
 */
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { CONVERSATION_SESSIONS, conversationSessions, type ConversationSession } from '../shared/conversation-sessions.js';
import { requireRole } from '../shared/roles.js';

/** Sessions kept per account; the oldest go first. */
const MAX_PER_ACCOUNT = 500;

/** Registers the area at start-up, so a snapshot finds it before the first request. */
export function registerSessions(emu: Emulator): void {
  conversationSessions(emu);
}

/** Creates a session: `voice_id` must name a role (the family's param error, 20003 for calls). */
export function createSession(emu: Emulator, account: Account, voiceId: string): ConversationSession {
  const sessions = conversationSessions(emu);
  requireRole(emu, voiceId, 'voice_id');
  const session: ConversationSession = {
    sessionId: `sess_${emu.ids.stream(account.id).hex(24)}`,
    accountId: account.id,
    voiceId,
    createdAtMs: emu.clock.now(),
    turns: [],
  };
  sessions.set(session.sessionId, session);
  emu.markDirty(CONVERSATION_SESSIONS, account.id, session.sessionId);
  const mine = [...sessions.values()].filter((x) => x.accountId === account.id);
  for (const old of mine.slice(0, Math.max(0, mine.length - MAX_PER_ACCOUNT))) {
    sessions.delete(old.sessionId);
    emu.markDirty(CONVERSATION_SESSIONS, account.id, old.sessionId);
  }
  return session;
}

/** Deletes a session of this account; true also when there was none (the spec's rule). */
export function deleteSession(emu: Emulator, accountId: string, sessionId: string): true {
  const sessions = conversationSessions(emu);
  const session = sessions.get(sessionId);
  if (session && session.accountId === accountId) {
    sessions.delete(sessionId);
    emu.markDirty(CONVERSATION_SESSIONS, accountId, sessionId);
  }
  return true;
}
