/**
 * The room's side of the bot (bot/index.ts): the factory type the room server is given, so the
 * project's tests can hand a room another bot while the shipped server starts the conversing one.
 */
import type { Emulator } from '../../../core/emulator.js';
import type { BotOutput, RoomBot, RoomBotOptions } from './bot/index.js';

export type { AgentState, BotOutput, RoomBot, RoomBotOptions } from './bot/index.js';

export type RoomBotFactory = (emu: Emulator, opts: RoomBotOptions, out: BotOutput) => RoomBot;
