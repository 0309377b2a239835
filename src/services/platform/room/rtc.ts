/**
 * The rooms' WebRTC, on `werift`: a WebRTC stack written in TypeScript (ICE, DTLS-SRTP, SCTP data
 * channels), so the emulator ships no native binary and downloads nothing at run time. It is loaded on
 * the first room connection only: an emulator that never hosts a room starts and runs as before.
 *
 * Each participant has two peer connections, as LiveKit's dual-PC signalling has them: the subscriber
 * (the server offers the bot's audio track and the `_reliable`/`_lossy` data channels) and the
 * publisher (the client offers its microphone track; the server answers).
 */
import type * as WeriftModule from 'werift';
import type { Emulator } from '../../../core/emulator.js';

export type Werift = typeof WeriftModule;
export type PeerConnection = WeriftModule.RTCPeerConnection;
export type MediaTrack = WeriftModule.MediaStreamTrack;
export type DataChannel = WeriftModule.RTCDataChannel;
export type Transport = WeriftModule.RTCDtlsTransport;

let loading: Promise<Werift> | null = null;
/** werift, loaded once on first use. */
export function loadWerift(): Promise<Werift> {
  loading ??= import('werift');
  return loading;
}

/** The Opus payload type the rooms use on both peer connections (the one browsers offer first). */
export const OPUS_PAYLOAD_TYPE = 111;

/** Host addresses offered as ICE candidates: loopback always, and `--rtc-node-ip` when set (werift adds the host's own). */
export function hostAddresses(emu: Emulator): string[] {
  const list = ['127.0.0.1'];
  if (emu.config.rtcNodeIp && !list.includes(emu.config.rtcNodeIp)) list.push(emu.config.rtcNodeIp);
  return list;
}

export async function newPeerConnection(emu: Emulator): Promise<PeerConnection> {
  const w = await loadWerift();
  return new w.RTCPeerConnection({
    codecs: {
      audio: [
        new w.RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          payloadType: OPUS_PAYLOAD_TYPE,
          parameters: 'minptime=10;useinbandfec=1',
        }),
      ],
      video: [],
    },
    icePortRange: emu.config.rtcUdpPorts,
    iceAdditionalHostAddresses: hostAddresses(emu),
    iceUseIpv6: false,
    // ICE-lite, as SFUs run it: the server offers its host candidates and answers the client's checks, and
    // asks no STUN server for a reflexive address (werift's default would query a public one, sending a
    // datagram off the machine at every join). Clients, always full agents, take the controlling role.
    iceLite: true,
    iceServers: [],
  });
}

/**
 * The local description as the client reads it: werift writes `a=ice-lite` in each media section, where
 * libwebrtc (browsers, LiveKit's native SDKs) does not look; RFC 8839 makes it a session attribute. Put
 * there, the client knows the server is lite and takes the controlling role on both peer connections.
 */
export function sdpForClient(sdp: string): string {
  const lines = sdp.split('\r\n').filter((l) => l !== 'a=ice-lite');
  const timing = lines.findIndex((l) => l.startsWith('t='));
  lines.splice(timing + 1, 0, 'a=ice-lite');
  return lines.join('\r\n');
}

/** Remembers the transports `pc` has now (call it after each local description). */
export function noteTransports(pc: PeerConnection, into: Set<Transport>): void {
  for (const t of pc.dtlsTransports) into.add(t);
  const sctp = pc.sctpTransport?.dtlsTransport;
  if (sctp) into.add(sctp);
}

/**
 * Closes the peer connections and then every transport they ever had: when the client's description bundles a
 * section onto another's transport, werift lets go of the section's own transport without closing it, and its
 * ICE sockets would stay bound after the room ended.
 */
export async function closePeers(pcs: (PeerConnection | null)[], transports: Set<Transport>): Promise<void> {
  await Promise.allSettled(pcs.map((pc) => pc?.close()));
  await Promise.allSettled([...transports].map((t) => t.stop()));
  transports.clear();
}

/** Wall time: host candidates gather in milliseconds; a connection that has not gathered by then never will. */
export const GATHER_TIMEOUT_MS = 5_000;

/**
 * Resolves once the peer connection gathered its candidates (they are then in its local description);
 * rejects when it has not after GATHER_TIMEOUT_MS (a description with nothing to gather for stays `new`).
 */
export function gathered(pc: PeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unSubscribe();
      reject(new Error(`ICE gathering did not complete in ${GATHER_TIMEOUT_MS} ms`));
    }, GATHER_TIMEOUT_MS);
    const { unSubscribe } = pc.iceGatheringStateChange.subscribe((state) => {
      if (state !== 'complete') return;
      clearTimeout(timer);
      unSubscribe();
      resolve();
    });
  });
}

/** A client's SDP has something to negotiate: at least one media section (werift takes any text as an empty description). */
export function hasMediaSection(sdp: string): boolean {
  return /^m=(audio|video|application) /m.test(sdp);
}

/**
 * A candidate from LiveKit's trickle message (the JSON of an RTCIceCandidateInit). As LiveKit does, one that
 * does not decode is ignored (the connection goes on). So is an mDNS name (`….local`, what a browser trickles
 * before it may show its addresses): an ICE-lite server never checks toward a client's candidates, it answers
 * the client's checks, so looking the name up (a multicast query on the network) would serve nothing.
 */
export async function addTrickle(pc: PeerConnection, candidateInit: string): Promise<void> {
  let init: { candidate?: unknown; sdpMid?: unknown; sdpMLineIndex?: unknown };
  try {
    init = JSON.parse(candidateInit) as typeof init;
  } catch {
    return;
  }
  if (!init || typeof init.candidate !== 'string' || !init.candidate) return; // undecodable, or the end-of-candidates marker
  const address = init.candidate.replace(/^a=/, '').split(' ')[4] ?? '';
  if (address.endsWith('.local')) return;
  const w = await loadWerift();
  try {
    await pc.addIceCandidate(
      new w.RTCIceCandidate({
        candidate: init.candidate,
        sdpMid: typeof init.sdpMid === 'string' ? init.sdpMid : undefined,
        sdpMLineIndex: typeof init.sdpMLineIndex === 'number' ? init.sdpMLineIndex : undefined,
      }),
    );
  } catch {
    // A candidate line werift cannot read, or one for a section the connection lacks: ignored, as above.
  }
}
