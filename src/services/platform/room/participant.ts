/**
 * One user connection of a room: LiveKit's signalling on the WebSocket (protobuf frames, or their JSON
 * in text frames, answered the same way), its two peer connections, the user's microphone decoded for
 * the bot, the bot's audio and data sent down. Messages are handled one after the other, in order.
 */
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { OpusCodec } from '../../../audio/opus-native.js';
import type { Emulator } from '../../../core/emulator.js';
import { openSocketWire, type SocketWire } from '../../../core/socket/wire.js';
import { messageBytes } from '../../../core/socket/protocol.js';
import { joinResponse, leave, lk, participantInfo, response, trackInfo, type ParticipantView, type PingTiming, type TrackView } from './messages.js';
import type { Room, RoomMember } from './room.js';
import {
  addTrickle,
  closePeers,
  gathered,
  hasMediaSection,
  loadWerift,
  newPeerConnection,
  noteTransports,
  OPUS_PAYLOAD_TYPE,
  sdpForClient,
  type DataChannel,
  type MediaTrack,
  type PeerConnection,
  type Transport,
  type Werift,
} from './rtc.js';
import type { Grants } from './tokens.js';

/**
 * Wall time (media timing, not a rule of the session): a connection whose media is not up this long after its
 * join is dropped (`CONNECTION_TIMEOUT`). Moving the emulator clock never drops a connection whose ICE is under way.
 */
export const ICE_TIMEOUT_MS = 20_000;
/** Signalling frames larger than this are refused (LiveKit's read limit). */
const MAX_SIGNAL_BYTES = 1 << 20;

export class Participant implements RoomMember {
  readonly view: ParticipantView;
  private readonly wire: SocketWire;
  private json = false;
  private chain: Promise<void> = Promise.resolve();
  private subscriber: PeerConnection | null = null;
  private publisher: PeerConnection | null = null;
  private botTrack: MediaTrack | null = null;
  /** werift, once the subscriber exists: the bot's packets are made with it at once, never after an import per packet. */
  private werift: Werift | null = null;
  private reliable: DataChannel | null = null;
  private decoder: OpusCodec | null = null;
  private readonly pendingTracks = new Map<string, TrackView>();
  /** Every transport the peer connections had (see closePeers). */
  private readonly transports = new Set<Transport>();
  private mediaUp = false;
  private left = false;
  private released = false;
  private iceTimer: NodeJS.Timeout | undefined;
  /** Restarted by every signalling message; runs out after the ping timeout told in the join. */
  private silenceTimer: NodeJS.Timeout | undefined;
  private disconnectReason: lk.DisconnectReason | null = null;

  constructor(
    private readonly emu: Emulator,
    private readonly room: Room,
    private readonly socket: WebSocket,
    private readonly req: FastifyRequest,
    grants: Grants,
    private readonly ping: PingTiming,
  ) {
    this.wire = openSocketWire(emu, socket, req);
    // The room's audio reaches this client over UDP, not through the socket.
    this.wire.carriesMedia();
    this.view = {
      sid: room.newId('PA_'),
      identity: grants.identity,
      name: grants.name,
      kind: lk.ParticipantInfo_Kind.STANDARD,
      state: lk.ParticipantInfo_State.JOINED,
      joinedAtMs: emu.clock.now(),
      version: 1,
      attributes: {},
      tracks: [],
      canPublish: grants.canPublish,
      canSubscribe: grants.canSubscribe,
      canPublishData: grants.canPublishData,
    };
    this.wire.onClose(() => this.release());
  }

  private get entry() {
    return this.req.ctx?.entry;
  }

  /** Sends the join answer and the subscriber offer; replaces an earlier connection of the same identity. */
  start(): void {
    for (const other of [...this.room.members]) if (other.view.identity === this.view.identity) other.leave(lk.DisconnectReason.DUPLICATE_IDENTITY);
    this.room.add(this);
    this.socket.on('message', (data: RawData, isBinary: boolean) => this.onFrame(messageBytes(data), isBinary));
    this.send(
      joinResponse({
        roomSid: this.room.sid,
        roomName: this.room.name,
        createdAtMs: this.room.createdAtMs,
        participants: this.room.members.size + 1,
        self: this.view,
        others: [this.room.bot],
        nodeId: `ND_${this.room.sid.slice(3)}`,
        ping: this.ping,
      }),
    );
    this.entry?.noteRoom({ room_name: this.room.name, identity: this.view.identity, participant_sid: this.view.sid });
    this.room.area.joined(this.room.host);
    this.iceTimer = setTimeout(() => this.iceTimedOut(), ICE_TIMEOUT_MS);
    this.iceTimer.unref();
    // Wall time (connection timing, not a rule of the session): a client that sends nothing, not even its
    // pings, for the ping timeout is gone (its network died with the socket still open). LiveKit's server
    // notices such a client when its ICE fails (15 s, CONNECTION_TIMEOUT); an ICE-lite server never checks
    // toward the client, so the room reads the silence of its signalling instead. Moving the emulator
    // clock never drops a connection.
    this.silenceTimer = setTimeout(() => this.silenceTimedOut(), this.ping.timeoutSec * 1000);
    this.silenceTimer.unref();
    this.enqueue(() => this.offerSubscriber());
  }

  // ---- signalling in ----

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (this.left) return;
    if (data.length > MAX_SIGNAL_BYTES) {
      this.wire.recordIn(data.length, isBinary, 'oversize', { bytes: data.length });
      return this.disconnect(lk.DisconnectReason.SIGNAL_CLOSE, 1009, `signal message of ${data.length} bytes is over the ${MAX_SIGNAL_BYTES}-byte limit`);
    }
    let req: lk.SignalRequest;
    try {
      req = isBinary ? lk.SignalRequest.fromBinary(data) : lk.SignalRequest.fromJsonString(data.toString('utf8'), { ignoreUnknownFields: true });
    } catch (err) {
      this.wire.recordIn(data.length, isBinary, 'invalid', isBinary ? { bytes: data.length } : data.toString('utf8'));
      // LiveKit stops reading a connection whose message does not decode: the participant is closed.
      return this.disconnect(lk.DisconnectReason.SIGNAL_CLOSE, 1007, `invalid signal request: ${(err as Error).message}`.slice(0, 120));
    }
    if (!isBinary) this.json = true;
    this.silenceTimer?.refresh();
    this.wire.recordIn(data.length, isBinary, req.message.case ?? 'empty', req.toJson());
    // Pings are answered at once, never behind a negotiation under way (the client's ping timeout keeps running).
    if (req.message.case === 'ping' || req.message.case === 'pingReq') return void this.onRequest(req);
    this.enqueue(() => this.onRequest(req));
  }

  private enqueue(step: () => Promise<void> | void): void {
    this.chain = this.chain
      .then(async () => {
        if (!this.left) await step();
      })
      .catch((err: unknown) => {
        if (this.left) return;
        this.emu.logger.warn({ err, room: this.room.name }, 'room signalling step failed');
        this.disconnect(lk.DisconnectReason.STATE_MISMATCH, 1011, 'negotiation failed');
      });
  }

  private async onRequest(req: lk.SignalRequest): Promise<void> {
    const m = req.message;
    switch (m.case) {
      case 'offer':
        return this.answerPublisher(m.value);
      case 'answer':
        if (!this.subscriber) return;
        if (!hasMediaSection(m.value.sdp)) throw new Error('the answer has no media section');
        return this.subscriber.setRemoteDescription({ type: 'answer', sdp: m.value.sdp });
      case 'trickle': {
        const pc = m.value.target === lk.SignalTarget.SUBSCRIBER ? this.subscriber : this.publisher;
        if (pc) await addTrickle(pc, m.value.candidateInit);
        return;
      }
      case 'addTrack':
        return this.addTrack(m.value);
      case 'mute': {
        const t = this.view.tracks.find((x) => x.sid === m.value.sid);
        if (t) t.muted = m.value.muted;
        return;
      }
      case 'ping':
        return void this.send(response({ case: 'pong', value: m.value }));
      case 'pingReq':
        return void this.send(
          response({ case: 'pongResp', value: new lk.Pong({ lastPingTimestamp: m.value.timestamp, timestamp: BigInt(this.emu.clock.now()) }) }),
        );
      case 'leave':
        return this.disconnect(lk.DisconnectReason.CLIENT_INITIATED, 1000, 'client left');
      default:
        // Subscription settings, metadata, layers…: nothing in these rooms depends on them (journaled only).
        return;
    }
  }

  private addTrack(req: lk.AddTrackRequest): void {
    if (!this.view.canPublish) {
      // LiveKit's refusal of a track the token may not publish.
      this.send(
        response({
          case: 'requestResponse',
          value: new lk.RequestResponse({ reason: lk.RequestResponse_Reason.NOT_ALLOWED, request: { case: 'addTrack', value: req } }),
        }),
      );
      return;
    }
    if (req.type !== lk.TrackType.AUDIO) {
      this.send(
        response({
          case: 'requestResponse',
          value: new lk.RequestResponse({ reason: lk.RequestResponse_Reason.UNSUPPORTED_TYPE, request: { case: 'addTrack', value: req } }),
        }),
      );
      return;
    }
    const track: TrackView = {
      sid: this.room.newId('TR_'),
      name: req.name,
      source: req.source,
      muted: req.muted,
      mimeType: 'audio/opus',
      stream: req.stream,
    };
    this.pendingTracks.set(req.cid, track);
    this.send(response({ case: 'trackPublished', value: new lk.TrackPublishedResponse({ cid: req.cid, track: trackInfo(track) }) }));
  }

  // ---- peer connections ----

  /** The subscriber: the bot's audio track (stream `<bot sid>|<track sid>`) and the data channels, offered by the server. */
  private async offerSubscriber(): Promise<void> {
    const pc = await newPeerConnection(this.emu);
    if (this.left) return void pc.close();
    this.subscriber = pc;
    this.werift = await loadWerift();
    const track = new this.werift.MediaStreamTrack({ kind: 'audio' });
    const transceiver = pc.addTransceiver(track, { direction: 'sendonly' });
    transceiver.sender.streamId = `${this.room.bot.sid}|${this.room.botTrackSid}`;
    (transceiver.sender as { trackId: string }).trackId = this.room.botTrackSid;
    this.botTrack = track;
    this.reliable = pc.createDataChannel('_reliable', { ordered: true });
    pc.createDataChannel('_lossy', { ordered: false, maxRetransmits: 0 });
    pc.connectionStateChange.subscribe((state) => this.subscriberState(state));
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    noteTransports(pc, this.transports);
    await gathered(pc);
    if (this.left) return;
    this.send(response({ case: 'offer', value: new lk.SessionDescription({ type: 'offer', sdp: sdpForClient(pc.localDescription!.sdp), id: 1 }) }));
  }

  private subscriberState(state: string): void {
    if (state === 'connected' && !this.mediaUp) {
      this.mediaUp = true;
      this.view.state = lk.ParticipantInfo_State.ACTIVE;
      this.entry?.noteRoom({ tracks_subscribed: [{ sid: this.room.botTrackSid, participant: this.room.bot.identity }] });
      this.room.userReady({ entry: this.entry, fault: this.req.ctx?.fault });
    } else if ((state === 'failed' || state === 'closed') && !this.left) {
      // The peer vanished (ICE lost): LiveKit closes the participant.
      this.disconnect(lk.DisconnectReason.CONNECTION_TIMEOUT, 1000, 'media connection lost');
    }
  }

  /** The publisher: the client offers (its microphone, its data channels), the server answers. */
  private async answerPublisher(offer: lk.SessionDescription): Promise<void> {
    if (!hasMediaSection(offer.sdp)) throw new Error('the offer has no media section');
    if (!this.publisher) {
      const pc = await newPeerConnection(this.emu);
      if (this.left) return void pc.close();
      this.publisher = pc;
      pc.onTrack.subscribe((track) => this.userTrack(track));
    }
    const pc = this.publisher;
    await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    noteTransports(pc, this.transports);
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    noteTransports(pc, this.transports);
    await gathered(pc);
    if (this.left) return;
    this.send(response({ case: 'answer', value: new lk.SessionDescription({ type: 'answer', sdp: sdpForClient(pc.localDescription!.sdp), id: offer.id }) }));
    // Tracks announced with addTrack are published once their offer was answered.
    if (this.pendingTracks.size) {
      this.view.tracks.push(...this.pendingTracks.values());
      this.pendingTracks.clear();
      this.view.version++;
      this.entry?.noteRoom({ tracks_published: this.view.tracks.map((t) => ({ sid: t.sid, name: t.name, source: lk.TrackSource[t.source] ?? 'UNKNOWN' })) });
    }
  }

  private userTrack(track: MediaTrack): void {
    // A participant without the publish grant is never heard, whatever its peer connection carries.
    if (track.kind !== 'audio' || !this.view.canPublish) return;
    track.onReceiveRtp.subscribe((rtp) => {
      if (this.left || rtp.payload.length === 0) return;
      this.decoder ??= new OpusCodec(48000, 1);
      let pcm: Buffer;
      try {
        pcm = this.decoder.decode(rtp.payload);
      } catch {
        return; // a damaged packet: skipped, as a jitter buffer would
      }
      this.room.userAudio(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1));
    });
  }

  // ---- what the room sends ----

  botAudio(packet: Buffer, rtp: { sequenceNumber: number; timestamp: number; marker: boolean }): void {
    const w = this.werift;
    if (this.left || !this.mediaUp || !this.botTrack || !w || !this.view.canSubscribe) return;
    const header = new w.RtpHeader({ sequenceNumber: rtp.sequenceNumber, timestamp: rtp.timestamp, marker: rtp.marker, payloadType: OPUS_PAYLOAD_TYPE });
    this.botTrack.writeRtp(new w.RtpPacket(header, packet));
  }

  botChanged(bot: ParticipantView): void {
    this.send(response({ case: 'update', value: new lk.ParticipantUpdate({ participants: [participantInfo(bot)] }) }));
  }

  botData(packets: lk.DataPacket[]): void {
    const dc = this.reliable;
    if (this.left || !dc || dc.readyState !== 'open') return;
    for (const p of packets) dc.send(Buffer.from(p.toBinary()));
  }

  // ---- leaving ----

  drop(): void {
    if (this.left) return;
    this.disconnectReason = lk.DisconnectReason.UNKNOWN_REASON;
    this.left = true;
    this.entry?.setNote('room dropped (fault): the connection was cut');
    this.wire.terminate();
    this.release();
  }

  /** The server ends this connection: LiveKit's leave with its reason, then the socket closes. */
  leave(reason: lk.DisconnectReason): void {
    this.disconnect(reason, 1000, lk.DisconnectReason[reason] ?? 'leave', true);
  }

  private disconnect(reason: lk.DisconnectReason, closeCode: number, closeReason: string, tell = reason !== lk.DisconnectReason.CLIENT_INITIATED): void {
    if (this.left) return;
    this.disconnectReason = reason;
    if (tell) this.send(leave(reason));
    this.left = true;
    this.wire.close(closeCode, closeReason);
    this.release();
  }

  private iceTimedOut(): void {
    if (!this.mediaUp) this.disconnect(lk.DisconnectReason.CONNECTION_TIMEOUT, 1000, 'media connection timed out');
  }

  private silenceTimedOut(): void {
    this.entry?.setNote(`no signalling message for ${this.ping.timeoutSec} s (the ping timeout): the participant was removed`);
    this.disconnect(lk.DisconnectReason.CONNECTION_TIMEOUT, 1000, 'ping timeout');
  }

  /** Everything the connection holds goes (it runs once, whoever closed). */
  private release(): void {
    if (this.released) return;
    this.released = true;
    clearTimeout(this.iceTimer);
    clearTimeout(this.silenceTimer);
    this.left = true;
    this.room.remove(this);
    // A socket that closed without a leave: LiveKit's reason for a signal connection lost (SIGNAL_CLOSE).
    // LiveKit keeps a participant whose media is up for a resume; these rooms do not resume, so it goes at once.
    const reason = this.disconnectReason ?? lk.DisconnectReason.SIGNAL_CLOSE;
    this.view.state = lk.ParticipantInfo_State.DISCONNECTED;
    this.view.disconnectReason = reason;
    this.entry?.noteRoom({ disconnect_reason: lk.DisconnectReason[reason] ?? 'UNKNOWN_REASON' });
    void closePeers([this.subscriber, this.publisher], this.transports);
    this.subscriber = null;
    this.publisher = null;
    this.botTrack?.stop();
    this.botTrack = null;
    this.reliable = null;
    this.decoder?.free();
    this.decoder = null;
  }

  private send(msg: lk.SignalResponse): boolean {
    if (this.wire.closed || this.socket.readyState !== this.socket.OPEN) return false;
    const event = msg.message.case ?? 'empty';
    if (this.json) {
      const text = msg.toJsonString();
      this.socket.send(text);
      this.emu.journal.recordFrame(this.entry, { dir: 'out', type: 'text', size: Buffer.byteLength(text), event, at_ms: this.emu.clock.now() }, msg.toJson());
    } else {
      const bytes = msg.toBinary();
      this.socket.send(bytes);
      this.emu.journal.recordFrame(this.entry, { dir: 'out', type: 'binary', size: bytes.length, event, at_ms: this.emu.clock.now() }, msg.toJson());
    }
    return true;
  }
}
