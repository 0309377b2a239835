/**
 * REST conversation sessions (`/api/v1/audio/sessions`). The sessions themselves are kept in
 * `shared/conversation-sessions.ts` (the conversation WebSockets add turns to them, calls copy them);
 * here are the rules of creating and deleting them (see docs/platform-sessions.md).
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import {
  addSession,
  CONVERSATION_SESSIONS,
  conversationSessions,
  removeSession,
  sessionsOfAccount,
  type ConversationSession,
} from '../shared/conversation-sessions.js';
import { requireRole } from '../shared/roles.js';

/** Sessions kept per account; the oldest go first. */
const MAX_PER_ACCOUNT = 500;

/** Registers the area at start-up, so a snapshot finds it before the first request. */
export function registerSessions(emu: Emulator): void {
  conversationSessions(emu);
}

/** Creates a session: `voice_id` must name a role (the family's param error, 20003 for calls). */
export function createSession(emu: Emulator, account: Account, voiceId: string): ConversationSession {
  requireRole(emu, voiceId, 'voice_id');
  const session: ConversationSession = {
    sessionId: `sess_${emu.ids.stream(account.id).hex(24)}`,
    accountId: account.id,
    voiceId,
    createdAtMs: emu.clock.now(),
    turns: [],
  };
  addSession(emu, session);
  emu.markDirty(CONVERSATION_SESSIONS, account.id, session.sessionId);
  // The account's own sessions in creation order: pruning costs them, not every session stored.
  const mine = sessionsOfAccount(emu, account.id);
  const extra = mine.size - MAX_PER_ACCOUNT;
  if (extra > 0) {
    const oldest = [...mine.keys()].slice(0, extra);
    for (const id of oldest) {
      removeSession(emu, id);
      emu.markDirty(CONVERSATION_SESSIONS, account.id, id);
    }
  }
  return session;
}

/** Deletes a session of this account; true also when there was none (the spec's rule). */
export function deleteSession(emu: Emulator, accountId: string, sessionId: string): true {
  const session = conversationSessions(emu).get(sessionId);
  if (session && session.accountId === accountId) {
    removeSession(emu, sessionId);
    emu.markDirty(CONVERSATION_SESSIONS, accountId, sessionId);
  }
  return true;
}
