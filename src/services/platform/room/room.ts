/**
 * One room of a call or an agent session: its bot participant (identity, audio track, `lk.agent.state`),
 * the user connections in it, and the bot's brain. The room exists while its session runs; when the
 * session ends every connection is told `ROOM_DELETED` and everything the room held is released.
 */
import type { Emulator } from '../../../core/emulator.js';
import { RandomStream } from '../../../core/state/ids.js';
import type { FaultDirective } from '../../../core/faults/faults.js';
import type { JournalEntry } from '../../../core/journal/journal.js';
import type { RoomHost, RoomHostArea } from '../shared/room-hosts.js';
import type { AgentState, BotOutput, RoomBot, RoomBotFactory } from './bot-port.js';
import { TrackClock, type RtpTiming } from './track-clock.js';
import { AGENT_STATE_ATTRIBUTE, lk, textStream, TRANSCRIPTION_TOPIC, type ParticipantView } from './messages.js';

/** Silence on the bot's track between the user's media connecting and the bot starting (wall time). */
export const PRIME_MS = 1000;

/** What the room needs of a user connection (participant.ts). */
export interface RoomMember {
  readonly view: ParticipantView;
  /** The room ends or a newer connection of the same identity came: LiveKit's leave, then close. */
  leave(reason: lk.DisconnectReason): void;
  /** The room is dropped (a fault): the connection is cut without a word, as a crashed server's would be. */
  drop(): void;
  /** The bot's participant changed (attributes): a ParticipantUpdate. */
  botChanged(bot: ParticipantView): void;
  /** One Opus packet of the bot's track with its RTP timing. */
  botAudio(packet: Buffer, rtp: RtpTiming): void;
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
  private priming: NodeJS.Timeout | null = null;
  private track: TrackClock | null = null;
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

  /**
   * The user can hear: the bot starts (once per room) and greets. It journals on the entry of the
   * connection that first heard it and reads that connection's fault directive.
   */
  userReady(by: { entry?: JournalEntry | null; fault?: FaultDirective | null }): void {
    if (this.brain || this.priming || this.ended) return;
    // The track runs from now on; the bot starts after PRIME_MS of silence on it, so the receiver's
    // jitter buffer has settled when the greeting's first sound (the signature at its head) arrives.
    this.track ??= new TrackClock((packet, rtp) => {
      for (const m of this.members) m.botAudio(packet, rtp);
    });
    this.track.start();
    this.priming = setTimeout(() => {
      this.priming = null;
      // A bot that cannot start (its session's role or agent gone from the fixtures) ends the room, never the process.
      try {
        this.startBot(by);
      } catch (err) {
        this.emu.logger.error({ err }, 'room bot could not start; the room ends');
        this.end(lk.DisconnectReason.ROOM_DELETED, true);
      }
    }, PRIME_MS);
  }

  private startBot(by: { entry?: JournalEntry | null; fault?: FaultDirective | null }): void {
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
        entry: by.entry ?? undefined,
        fault: by.fault ?? undefined,
        onTurn: (turn) => this.area.turn(this.host, turn),
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
    if (!this.ended) this.track?.push(frame);
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
    // The room is lost under its session (the call ends `abnormal`, the agent session fails); a fault
    // drops the connections as a crashed server would, the end of a script says goodbye.
    this.area.lost(this.host);
    this.end(lk.DisconnectReason.ROOM_DELETED, reason === 'fault');
  }

  /** The session ended: everyone is told (or, dropped, cut off), the bot leaves, everything is released. */
  end(reason: lk.DisconnectReason = lk.DisconnectReason.ROOM_DELETED, dropped = false): void {
    if (this.ended) return;
    this.ended = true;
    if (this.priming) clearTimeout(this.priming);
    this.priming = null;
    for (const m of [...this.members]) {
      if (dropped) m.drop();
      else m.leave(reason);
    }
    this.members.clear();
    try {
      this.brain?.close();
    } catch (err) {
      this.emu.logger.error({ err }, 'room bot close failed');
    }
    this.brain = null;
    this.track?.stop();
    this.track = null;
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
