/**
 * Turn-taking of the conversation sockets, in the order the socket applies them. `/stream`: an
 * utterance ends with `{is_final:true}`, after PAUSE_MS without audio (emulator clock) or with
 * SILENCE_END_MS of trailing silence in the audio; one reply per utterance, several turns per
 * connection. `/stream-text`: one turn per connection. Pure rules over the utterance heard so far; the
 * socket reads frames, keeps the timer and sends events.
 */
import { endedBySilence, PAUSE_MS, SILENCE_END_MS } from '../shared/conversation-turn.js';
import { durationMs, MAX_UTTERANCE_MS, type Utterance } from '../shared/utterance.js';
import { badParameter, type ConversationError, type ConversationMode } from './model.js';

export { PAUSE_MS, SILENCE_END_MS };

/** The first message must be meta: `is_final` or audio before it is 20003. */
export function beforeMeta(what: 'is_final' | 'audio'): ConversationError {
  return what === 'is_final'
    ? badParameter('meta: the first message must be meta (voice_id, audio_format, language), not is_final')
    : badParameter('binary audio arrived before the meta message');
}

/** What a chunk of audio just added means for the utterance. */
export type AfterAudio =
  | { kind: 'refuse'; error: ConversationError }
  /** `/stream`: the trailing silence ends the utterance now. */
  | { kind: 'end' }
  /** `/stream`: the utterance ends unless more audio comes within `pauseMs` (emulator clock). */
  | { kind: 'wait'; pauseMs: number }
  /** `/stream-text`: only `{is_final}` ends it. */
  | { kind: 'listen' };

export function afterAudio(mode: ConversationMode, utterance: Utterance): AfterAudio {
  if (durationMs(utterance) > MAX_UTTERANCE_MS)
    return { kind: 'refuse', error: badParameter(`audio: an utterance may last at most ${MAX_UTTERANCE_MS / 1000} s`) };
  if (mode !== 'stream') return { kind: 'listen' };
  if (endedBySilence(utterance)) return { kind: 'end' };
  return { kind: 'wait', pauseMs: PAUSE_MS };
}

/** What the end of an utterance means: answer it, let it go, or refuse it. */
export type UtteranceEnd = { kind: 'answer' } | { kind: 'ignore' } | { kind: 'refuse'; error: ConversationError };

/**
 * `explicit`: ended by `{is_final:true}` (else by the pause or silence rules). An utterance with no audio,
 * or one that ended by itself with no voice in it, is not answered; `is_final` with no audio before it
 * is 20003 on `/stream-text` (its one turn would have nothing to answer), and ignored on `/stream` (an
 * utterance that already ended by itself).
 */
export function endOfUtterance(mode: ConversationMode, utterance: Utterance, explicit: boolean): UtteranceEnd {
  if (utterance.samples > 0 && (explicit || utterance.heardVoice)) return { kind: 'answer' };
  if (mode === 'text' && explicit) return { kind: 'refuse', error: badParameter('is_final: no audio was received before it') };
  return { kind: 'ignore' };
}
