/**
 * One room of a call or an agent session: its bot participant (identity, audio track, `lk.agent.state`),
 * the user connections in it, and the bot's brain. The room exists while its session runs; when the
 * session ends every connection is told `ROOM_DELETED` and everything the room held is released.
 */
import { performance } from 'node:perf_hooks';
import type { Emulator } from '../../../core/emulator.js';
import { RandomStream } from '../../../core/state/ids.js';
import { OpusCodec } from '../../../audio/opus-native.js';
import type { RoomHost, RoomHostArea } from '../shared/room-hosts.js';
import type { AgentState, BotOutput, RoomBot, RoomBotFactory } from './bot-port.js';
import { AGENT_STATE_ATTRIBUTE, lk, textStream, TRANSCRIPTION_TOPIC, type ParticipantView } from './messages.js';

/** 20 ms at 48 kHz: the bot's frames and Opus packets. */
export const FRAME_SAMPLES = 960;

/** What the room needs of a user connection (participant.ts). */
export interface RoomMember {
  readonly view: ParticipantView;
  /** The room ends or a newer connection of the same identity came: LiveKit's leave, then close. */
  leave(reason: lk.DisconnectReason): void;
  /** The bot's participant changed (attributes): a ParticipantUpdate. */
  botChanged(bot: ParticipantView): void;
  /** One Opus packet of the bot's track with its RTP timing. */
  botAudio(packet: Buffer, rtp: { sequenceNumber: number; timestamp: number; marker: boolean }, pcm: Int16Array): void;
  /** Data packets of the bot (text streams) on the reliable channel. */
  botData(packets: lk.DataPacket[]): void;
}

export class Room {
  readonly sid: string;
  readonly createdAtMs: number;
  readonly bot: ParticipantView;
  readonly members = new Set<RoomMember>();
  ended = false;
  private readonly ids: RandomStream;
  private brain: RoomBot | null = null;
  private encoder: OpusCodec | null = null;
  private sequence = 0;
  private timestamp = 0;
  private lastFrameAt = 0;
  private dataSequence = 0;
  private streams = 0;

  constructor(
    private readonly emu: Emulator,
    readonly host: RoomHost,
    readonly area: RoomHostArea,
    private readonly makeBot: RoomBotFactory,
    private readonly onEnded: (room: Room) => void,
  ) {
    // Ids of the room's own things come from the seed and the room name: the same session, the same ids.
    this.ids = new RandomStream(`${emu.config.seed}:room:${host.roomName}`);
    this.sid = `RM_${this.ids.hex(12)}`;
    this.createdAtMs = emu.clock.now();
    this.bot = {
      sid: `PA_${this.ids.hex(12)}`,
      identity: host.botIdentity,
      name: host.botName,
      kind: lk.ParticipantInfo_Kind.AGENT,
      state: lk.ParticipantInfo_State.ACTIVE,
      joinedAtMs: this.createdAtMs,
      version: 1,
      attributes: { [AGENT_STATE_ATTRIBUTE]: 'listening' },
      tracks: [{ sid: `TR_${this.ids.hex(12)}`, name: 'agent_audio', source: lk.TrackSource.MICROPHONE, muted: false, mimeType: 'audio/opus' }],
      canPublish: true,
      canSubscribe: true,
      canPublishData: true,
    };
  }

  get name(): string {
    return this.host.roomName;
  }

  get botTrackSid(): string {
    return this.bot.tracks[0]!.sid;
  }

  newId(prefix: string): string {
    return `${prefix}${this.ids.hex(12)}`;
  }

  /** A user connection is in the room (its join was answered). */
  add(member: RoomMember): void {
    this.members.add(member);
  }

  remove(member: RoomMember): void {
    this.members.delete(member);
  }

  /** The user can hear: the bot starts (once per room) and greets. */
  userReady(): void {
    if (this.brain || this.ended) return;
    const out: BotOutput = {
      audioFrame: (frame) => this.botAudio(frame),
      agentState: (state) => this.agentState(state),
      transcription: (t) => this.transcription(t),
      end: (reason) => this.botEnded(reason),
    };
    this.brain = this.makeBot(
      this.emu,
      {
        kind: this.host.kind,
        sessionId: this.host.sessionId,
        accountKey: this.host.accountId,
        role: this.host.role,
        language: this.host.language,
        agentId: this.host.agentId,
      },
      out,
    );
    this.brain.greet();
  }

  /** The user's microphone, decoded: 48 kHz mono PCM16. */
  userAudio(pcm: Int16Array): void {
    if (!this.ended) this.brain?.userAudio(pcm);
  }

  private botAudio(frame: Int16Array): void {
    if (this.ended) return;
    this.encoder ??= new OpusCodec(48000, 1);
    const packet = this.encoder.encode(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength), frame.length);
    // RTP time follows the wall clock across the bot's silences, so receivers see the pause as a pause.
    const now = performance.now();
    const gapSamples = this.lastFrameAt ? Math.round(((now - this.lastFrameAt) * 48000) / 1000) : 0;
    const marker = gapSamples > 3 * FRAME_SAMPLES || this.lastFrameAt === 0;
    this.timestamp = (this.timestamp + (marker && this.lastFrameAt ? Math.max(gapSamples, FRAME_SAMPLES) : FRAME_SAMPLES)) >>> 0;
    this.sequence = (this.sequence + 1) & 0xffff;
    this.lastFrameAt = now;
    for (const m of this.members) m.botAudio(packet, { sequenceNumber: this.sequence, timestamp: this.timestamp, marker }, frame);
  }

  private agentState(state: AgentState): void {
    if (this.ended || this.bot.attributes[AGENT_STATE_ATTRIBUTE] === state) return;
    this.bot.attributes = { ...this.bot.attributes, [AGENT_STATE_ATTRIBUTE]: state };
    this.bot.version++;
    for (const m of this.members) m.botChanged(this.bot);
  }

  private transcription(t: { speaker: 'user' | 'bot'; segmentId: string; text: string; final: boolean }): void {
    if (this.ended) return;
    // LiveKit's agents send both sides' transcriptions from the agent, naming the transcribed track;
    // each update of a segment is a stream of its own with the segment's id.
    const userTrack = [...this.members].flatMap((m) => m.view.tracks)[0]?.sid ?? '';
    const packets = textStream({
      sender: this.bot.identity,
      senderSid: this.bot.sid,
      topic: TRANSCRIPTION_TOPIC,
      atMs: this.emu.clock.now(),
      text: t.text,
      streamId: `${this.sid}_TX_${++this.streams}`,
      attributes: {
        'lk.segment_id': t.segmentId,
        'lk.transcription_final': String(t.final),
        'lk.transcribed_track_id': t.speaker === 'bot' ? this.botTrackSid : userTrack,
      },
      nextSequence: () => ++this.dataSequence,
    });
    for (const m of this.members) m.botData(packets);
  }

  private botEnded(reason: 'script_end' | 'fault'): void {
    if (this.ended) return;
    // The bot dropped the room (a close_ws fault) or ended its script: the session is lost with it.
    this.emu.logger.debug({ room: this.name, reason }, 'room bot ended the room');
    this.area.lost(this.host);
    // When the session was already over, its listener does not fire again: end the room here.
    this.end(lk.DisconnectReason.ROOM_DELETED);
  }

  /** The session ended: everyone is told, the bot leaves, everything is released. */
  end(reason: lk.DisconnectReason = lk.DisconnectReason.ROOM_DELETED): void {
    if (this.ended) return;
    this.ended = true;
    for (const m of [...this.members]) m.leave(reason);
    this.members.clear();
    try {
      this.brain?.close();
    } catch (err) {
      this.emu.logger.error({ err }, 'room bot close failed');
    }
    this.brain = null;
    this.encoder?.free();
    this.encoder = null;
    this.onEnded(this);
  }

  view(): unknown {
    return {
      room_name: this.name,
      sid: this.sid,
      kind: this.host.kind,
      session_id: this.host.sessionId,
      created_at_ms: this.createdAtMs,
      participants: [this.bot, ...[...this.members].map((m) => m.view)].map((p) => ({
        sid: p.sid,
        identity: p.identity,
        kind: p.kind === lk.ParticipantInfo_Kind.AGENT ? 'agent' : 'standard',
        state: lk.ParticipantInfo_State[p.state]?.toLowerCase(),
        attributes: p.attributes,
        tracks: p.tracks.map((t) => ({ sid: t.sid, name: t.name, kind: 'audio', muted: t.muted, mime_type: t.mimeType })),
      })),
    };
  }
}
