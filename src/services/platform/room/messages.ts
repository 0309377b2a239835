/**
 * LiveKit's signalling and data messages as the rooms build them, with `@livekit/protocol` (the
 * protobuf-es classes LiveKit generates from its own .proto files). Loaded with the room server, on
 * first use. Wire shapes only: what a room decides lives in room.ts and participant.ts.
 */
import * as lk from '@livekit/protocol';

export { lk };

/** What the server says it is (clients log it; agents' front ends read `edition`/`protocol`). */
export const SERVER_VERSION = '1.9.0';
export const SERVER_PROTOCOL = 16;
/**
 * Seconds, told in the join: the client pings every `intervalSec` and gives up after `timeoutSec` without a
 * pong; the server lets a participant go after `timeoutSec` without any signalling message (participant.ts).
 */
export interface PingTiming {
  intervalSec: number;
  timeoutSec: number;
}
export const PING_TIMING: PingTiming = { intervalSec: 5, timeoutSec: 15 };

export const AGENT_STATE_ATTRIBUTE = 'lk.agent.state';
export const TRANSCRIPTION_TOPIC = 'lk.transcription';

export interface TrackView {
  sid: string;
  name: string;
  source: lk.TrackSource;
  muted: boolean;
  mimeType: string;
  stream?: string;
}

export interface ParticipantView {
  sid: string;
  identity: string;
  name: string;
  kind: lk.ParticipantInfo_Kind;
  state: lk.ParticipantInfo_State;
  joinedAtMs: number;
  version: number;
  attributes: Record<string, string>;
  tracks: TrackView[];
  canPublish: boolean;
  canSubscribe: boolean;
  canPublishData: boolean;
  disconnectReason?: lk.DisconnectReason;
}

export function trackInfo(t: TrackView): lk.TrackInfo {
  return new lk.TrackInfo({
    sid: t.sid,
    type: lk.TrackType.AUDIO,
    name: t.name,
    muted: t.muted,
    source: t.source,
    mimeType: t.mimeType,
    stream: t.stream ?? '',
  });
}

export function participantInfo(p: ParticipantView): lk.ParticipantInfo {
  return new lk.ParticipantInfo({
    sid: p.sid,
    identity: p.identity,
    name: p.name,
    state: p.state,
    kind: p.kind,
    joinedAt: BigInt(Math.floor(p.joinedAtMs / 1000)),
    joinedAtMs: BigInt(p.joinedAtMs),
    version: p.version,
    attributes: { ...p.attributes },
    tracks: p.tracks.map(trackInfo),
    isPublisher: p.tracks.length > 0,
    disconnectReason: p.disconnectReason ?? lk.DisconnectReason.UNKNOWN_REASON,
    permission: new lk.ParticipantPermission({
      canSubscribe: p.canSubscribe,
      canPublish: p.canPublish,
      canPublishData: p.canPublishData,
      canUpdateMetadata: false,
    }),
  });
}

export function response(message: lk.SignalResponse['message']): lk.SignalResponse {
  return new lk.SignalResponse({ message });
}

export function joinResponse(o: {
  roomSid: string;
  roomName: string;
  createdAtMs: number;
  participants: number;
  self: ParticipantView;
  others: ParticipantView[];
  nodeId: string;
  ping: PingTiming;
}): lk.SignalResponse {
  return response({
    case: 'join',
    value: new lk.JoinResponse({
      room: new lk.Room({
        sid: o.roomSid,
        name: o.roomName,
        emptyTimeout: 300,
        departureTimeout: 20,
        creationTime: BigInt(Math.floor(o.createdAtMs / 1000)),
        creationTimeMs: BigInt(o.createdAtMs),
        enabledCodecs: [new lk.Codec({ mime: 'audio/opus' })],
        numParticipants: o.participants,
        numPublishers: 1,
      }),
      participant: participantInfo(o.self),
      otherParticipants: o.others.map(participantInfo),
      serverVersion: SERVER_VERSION,
      subscriberPrimary: true,
      pingInterval: o.ping.intervalSec,
      pingTimeout: o.ping.timeoutSec,
      serverInfo: new lk.ServerInfo({ edition: lk.ServerInfo_Edition.Standard, version: SERVER_VERSION, protocol: SERVER_PROTOCOL, nodeId: o.nodeId }),
      enabledPublishCodecs: [new lk.Codec({ mime: 'audio/opus' })],
    }),
  });
}

export function leave(reason: lk.DisconnectReason): lk.SignalResponse {
  return response({ case: 'leave', value: new lk.LeaveRequest({ canReconnect: false, reason, action: lk.LeaveRequest_Action.DISCONNECT }) });
}

/** A text stream of LiveKit's data streams (header, one chunk per 15 000 bytes, trailer), as DataPackets. */
export function textStream(o: {
  streamId: string;
  sender: string;
  senderSid: string;
  topic: string;
  text: string;
  atMs: number;
  attributes: Record<string, string>;
  nextSequence: () => number;
}): lk.DataPacket[] {
  const bytes = new TextEncoder().encode(o.text);
  const packet = (value: lk.DataPacket['value']) =>
    new lk.DataPacket({ kind: lk.DataPacket_Kind.RELIABLE, participantIdentity: o.sender, participantSid: o.senderSid, sequence: o.nextSequence(), value });
  const packets = [
    packet({
      case: 'streamHeader',
      value: new lk.DataStream_Header({
        streamId: o.streamId,
        timestamp: BigInt(o.atMs),
        topic: o.topic,
        mimeType: 'text/plain',
        totalLength: BigInt(bytes.length),
        attributes: o.attributes,
        contentHeader: { case: 'textHeader', value: new lk.DataStream_TextHeader({ operationType: lk.DataStream_OperationType.CREATE }) },
      }),
    }),
  ];
  const CHUNK = 15_000;
  for (let i = 0, index = 0; i < bytes.length; i += CHUNK, index++) {
    packets.push(
      packet({
        case: 'streamChunk',
        value: new lk.DataStream_Chunk({ streamId: o.streamId, chunkIndex: BigInt(index), content: bytes.subarray(i, i + CHUNK) }),
      }),
    );
  }
  packets.push(packet({ case: 'streamTrailer', value: new lk.DataStream_Trailer({ streamId: o.streamId, reason: '' }) }));
  return packets;
}
