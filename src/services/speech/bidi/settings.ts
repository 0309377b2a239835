/**
 * The numbers of one bidirectional session: the account's `speech_settings.bidi` on the control plane
 * over the defaults of rules E6 and E8. Read once, when the socket opens.
 */
import type { Account } from '../../../core/state/accounts.js';
import { DEFAULT_BUFFER_SETTINGS, type BufferSettings } from './buffer.js';

export interface BidiSettings extends BufferSettings {
  /** Buffer plus queued sentences above this many code points: 2205. */
  maxPendingChars: number;
}

export const DEFAULT_MAX_PENDING_CHARS = 20_000;

export function bidiSettingsOf(account: Account): BidiSettings {
  const set = account.speechSettings?.bidi ?? {};
  return {
    minClauseChars: set.min_clause_chars ?? DEFAULT_BUFFER_SETTINGS.minClauseChars,
    maxSentenceChars: set.max_sentence_chars ?? DEFAULT_BUFFER_SETTINGS.maxSentenceChars,
    silenceMs: set.silence_ms ?? DEFAULT_BUFFER_SETTINGS.silenceMs,
    minTailChars: set.min_tail_chars ?? DEFAULT_BUFFER_SETTINGS.minTailChars,
    backstopMs: set.backstop_ms ?? DEFAULT_BUFFER_SETTINGS.backstopMs,
    maxPendingChars: set.max_pending_chars ?? DEFAULT_MAX_PENDING_CHARS,
  };
}

/** The settings as the control plane names them (journal entry, state view). */
export function settingsView(s: BidiSettings) {
  return {
    min_clause_chars: s.minClauseChars,
    max_sentence_chars: s.maxSentenceChars,
    silence_ms: s.silenceMs,
    min_tail_chars: s.minTailChars,
    backstop_ms: s.backstopMs,
    max_pending_chars: s.maxPendingChars,
  };
}
