/** The agreed interface between the room (transport) and its bot (startRoomBot in index.ts, which re-exports these). */
import type { FaultDirective } from '../../../../core/faults/faults.js';
import type { JournalEntry } from '../../../../core/journal/journal.js';

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
