/**
 * The room's side of the bot: what the bot gives the room (`BotOutput`) and what the room gives the
 * bot (`RoomBot`). The bot itself (recognition, the scripted reply, synthesis, barge-in) lives in bot/.
 */
import type { Emulator } from '../../../core/emulator.js';

export type AgentState = 'listening' | 'thinking' | 'speaking';

export interface BotOutput {
  /** One 20 ms frame, 48 kHz mono PCM16 (960 samples), already paced in real time. */
  audioFrame(frame: Int16Array): void;
  agentState(state: AgentState): void;
  transcription(t: { speaker: 'user' | 'bot'; segmentId: string; text: string; final: boolean }): void;
  /** The bot asks the room to end (its script ended, or a fault drops the room). */
  end(reason: 'script_end' | 'fault'): void;
}

export interface RoomBotOptions {
  kind: 'call' | 'agent';
  sessionId: string;
  accountKey: string;
  role?: string;
  language?: 'zh' | 'en';
  agentId?: string;
  entry?: unknown;
}

export interface RoomBot {
  greet(): void;
  /** 48 kHz mono PCM16, any length. */
  userAudio(frame: Int16Array): void;
  close(): void;
}

export type RoomBotFactory = (emu: Emulator, opts: RoomBotOptions, out: BotOutput) => RoomBot;

/** A bot that listens and never speaks: the rooms' bot until bot/ is wired in. */
export const quietBot: RoomBotFactory = (_emu, _opts, out) => ({
  greet: () => out.agentState('listening'),
  userAudio: () => {},
  close: () => {},
});
