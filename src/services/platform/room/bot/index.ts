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
 * (`role`, `agentId`, `language`), the room connection's fault directive (`fault`: the pace and
 * audio fields raw frames can carry, `cut_after_chunks` and `close_ws`, docs/call-room-bot.md; take
 * them with takeFault so they are not reported ignored), and an
 * optional `onTurn` through which the session keeps the turns (a call's `turns`, carried by
 * `previous_session_id`). The bot journals its own turns and cuts on `entry` (frames `bot_turn`, the
 * guard's notes), its audio as `answer_audio` and the user's as `client_audio`: the room need not.
 * The interface's types are in types.ts (re-exported here), so bot.ts reads them without a cycle.
 */
import type { Emulator } from '../../../../core/emulator.js';
import { ConversingBot } from './bot.js';
import type { BotOutput, RoomBot, RoomBotOptions } from './types.js';

export type { AgentState, BotOutput, RoomBot, RoomBotOptions } from './types.js';

export { BARGE_IN_VOICE_MS } from './bot.js';
export { SILENCE_END_MS, PAUSE_MS } from '../../shared/conversation-turn.js';

/** Throws when the role or agent is not in the fixtures (the session's own checks come first). */
export function startRoomBot(emu: Emulator, opts: RoomBotOptions, out: BotOutput): RoomBot {
  return new ConversingBot(emu, opts, out);
}
