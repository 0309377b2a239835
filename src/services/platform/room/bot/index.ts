/**
 * The bot of a call room: its brain, without WebRTC. The room hands it the user's microphone as 48 kHz
 * mono PCM and publishes what it says (20 ms frames), its agent state (`lk.agent.state`) and its
 * transcriptions (topic `lk.transcription`). It takes the conversation turn of the conversation
 * sockets (platform/shared/conversation-turn.ts, utterance.ts): end of utterance by silence,
 * recognition, the scripted reply, the same synthesis, the same charge. Its audio leaves through the
 * stream guard, so the pace and audio fault fields apply as on every audio stream. Rules in
 * docs/call-room-bot.md.
 *
 * Changes to the agreed interface (additive): RoomBotOptions names the role / agent / language
 * (`role`, `agentId`, `language`), the room connection's fault directive (`fault`, read for the
 * fields in BOT_FAULT_FIELDS: take them with takeFault so they are not reported ignored), and an
 * optional `onTurn` through which the session keeps the turns (a call's `turns`, carried by
 * `previous_session_id`). The bot journals its own turns and cuts on `entry` (frames `bot_turn`, the
 * guard's notes), its audio as `answer_audio` and the user's as `client_audio`: the room need not.
 */
import type { Emulator } from '../../../../core/emulator.js';
import type { FaultDirective } from '../../../../core/faults/faults.js';
import type { JournalEntry } from '../../../../core/journal/journal.js';
import { ConversingBot } from './bot.js';

export type AgentState = 'listening' | 'thinking' | 'speaking';

export interface BotOutput {
  /** One 20 ms frame, 48 kHz mono PCM16 (960 samples), paced in real time through the stream guard. */
  audioFrame(frame: Int16Array): void;
  /** Published by the room as participant attribute lk.agent.state. */
  agentState(state: AgentState): void;
  /** Sent by the room on topic lk.transcription. */
  transcription(t: { speaker: 'user' | 'bot'; segmentId: string; text: string; final: boolean }): void;
  /** The bot asks the room to end (e.g. close_ws / cut_after_chunks fault = a dropped room). */
  end(reason: 'script_end' | 'fault'): void;
}

export interface RoomBotOptions {
  kind: 'call' | 'agent';
  sessionId: string;
  /** The session's account: its id (what sessions keep) or its API key. Replies are charged to it; its standing stream faults apply. */
  accountKey: string;
  /** call: the session's role (`timbre`, a role id of roles.json); default `default`. */
  role?: string;
  /** agent: the session's agent (agents.json). */
  agentId?: string;
  /** call: the session's `language`; agent: the agent's fixture `language`, else `en`. */
  language?: string;
  /** The room connection's journal entry. */
  entry?: JournalEntry;
  /** The room connection's fault directive (header or queued rule); the bot reads BOT_FAULT_FIELDS of it. */
  fault?: FaultDirective;
  /** Told of every answered turn (what the user said, what the bot said of its reply). */
  onTurn?(turn: { user: string; reply: string }): void;
}

export interface RoomBot {
  /** The user joined: the bot speaks its greeting. */
  greet(): void;
  /** 48 kHz mono PCM16 of the user's microphone, any length, silence included. */
  userAudio(frame: Int16Array): void;
  /** The room ends: every timer and pending frame is released; nothing is sent after it. */
  close(): void;
}

export { BOT_FAULT_FIELDS } from './speaker.js';
export { BARGE_IN_VOICE_MS, INTERIM_EVERY_MS, PREROLL_MS } from './bot.js';
export { FRAME_MS, FRAME_SAMPLES } from './speaker.js';
export { SILENCE_END_MS, PAUSE_MS } from '../../shared/conversation-turn.js';
export { DEFAULT_GREETING } from './persona.js';

/** Throws when the role or agent is not in the fixtures (the session's own checks come first). */
export function startRoomBot(emu: Emulator, opts: RoomBotOptions, out: BotOutput): RoomBot {
  return new ConversingBot(emu, opts, out);
}
