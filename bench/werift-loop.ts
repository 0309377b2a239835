/**
 * The anchor of the room's join figures: a bare werift peer-to-peer loop in this process. Two
 * RTCPeerConnections on loopback with the rooms' Opus codec; one sends an audio track (a 20 ms Opus
 * packet of a tone every 20 ms once connected); measured from the offer to the first RTP packet the
 * other receives: what WebRTC itself costs, with no signalling server, no room and no bot.
 */
import { performance } from 'node:perf_hooks';
import { OpusCodec } from '../src/audio/opus-native.js';

export async function weriftLoop(): Promise<{ firstPacketMs: number }> {
  const w = await import('werift');
  const codecs = () => ({
    audio: [new w.RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })],
    video: [],
  });
  const options = { codecs: codecs(), iceAdditionalHostAddresses: ['127.0.0.1'], iceUseIpv6: false };
  const sender = new w.RTCPeerConnection(options);
  const receiver = new w.RTCPeerConnection({ ...options, codecs: codecs() });
  const encoder = new OpusCodec(48000, 1);
  const tone = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48000)));
  const packet = encoder.encode(new Uint8Array(tone.buffer), 960);
  encoder.free();
  let timer: NodeJS.Timeout | undefined;
  try {
    const track = new w.MediaStreamTrack({ kind: 'audio' });
    sender.addTransceiver(track, { direction: 'sendonly' });
    const t0 = performance.now();
    const first = new Promise<number>((resolve) => {
      receiver.onTrack.subscribe((t) => t.onReceiveRtp.once(() => resolve(performance.now())));
    });
    sender.connectionStateChange.subscribe((state) => {
      if (state !== 'connected' || timer) return;
      let seq = 0;
      const send = () => {
        seq++;
        track.writeRtp(new w.RtpPacket(new w.RtpHeader({ sequenceNumber: seq & 0xffff, timestamp: seq * 960, payloadType: 111, marker: seq === 1 }), packet));
      };
      send();
      timer = setInterval(send, 20);
    });
    await sender.setLocalDescription(await sender.createOffer());
    await gathered(sender);
    await receiver.setRemoteDescription(sender.localDescription!);
    await receiver.setLocalDescription(await receiver.createAnswer());
    await gathered(receiver);
    await sender.setRemoteDescription(receiver.localDescription!);
    return { firstPacketMs: (await first) - t0 };
  } finally {
    clearInterval(timer);
    await Promise.all([sender.close(), receiver.close()]);
  }
}

function gathered(pc: import('werift').RTCPeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const { unSubscribe } = pc.iceGatheringStateChange.subscribe((s) => {
      if (s !== 'complete') return;
      unSubscribe();
      resolve();
    });
  });
}
