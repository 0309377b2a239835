/**
 * In-process Ogg/Opus decoding (RFC 7845): Ogg pages are read by hand, their packets joined across
 * pages, and each packet decoded by libopus (the `opusscript` WebAssembly build the encoder uses) to
 * 48 kHz; the pre-skip is dropped and the last page's granule trims the padding of the last frame.
 */
import { nextTurn } from '../event-loop.js';
import { OpusCodec } from '../opus-native.js';

/** Packets decoded between two turns of the event loop (20 ms packets: about 4 s of audio). */
const PACKETS_PER_TURN = 200;

/** The packets of an Ogg stream (one logical stream), and the granule of its last page. */
function oggPackets(b: Buffer): { packets: Buffer[]; lastGranule: number } {
  const packets: Buffer[] = [];
  let pending: Buffer[] = [];
  let lastGranule = -1;
  let at = 0;
  while (at + 27 <= b.length) {
    if (b.toString('latin1', at, at + 4) !== 'OggS') throw new Error(`no Ogg page at byte ${at}`);
    const segments = b[at + 26]!;
    const table = at + 27;
    if (table + segments > b.length) throw new Error(`Ogg page at byte ${at} is truncated`);
    const granule = Number(b.readBigInt64LE(at + 6));
    let body = table + segments;
    for (let i = 0; i < segments; i++) {
      const len = b[table + i]!;
      if (body + len > b.length) throw new Error(`Ogg page at byte ${at} is truncated`);
      pending.push(b.subarray(body, body + len));
      body += len;
      // A lacing value under 255 ends the packet; 255 continues it (on this page or the next).
      if (len < 255) {
        packets.push(Buffer.concat(pending));
        pending = [];
      }
    }
    if (granule >= 0) lastGranule = granule;
    at = body;
  }
  return { packets, lastGranule };
}

/** Mono float samples at 48 kHz of an Ogg/Opus file, at most `maxFrames` of them; throws with the reason when it cannot. */
export async function decodeOggOpus(b: Buffer, maxFrames = Infinity): Promise<{ samples: Float32Array; sampleRate: number }> {
  const { packets, lastGranule } = oggPackets(b);
  const head = packets[0];
  if (!head || head.toString('latin1', 0, 8) !== 'OpusHead') throw new Error('the Ogg stream is not Opus (no OpusHead)');
  const channels = head[9]!;
  if (channels < 1 || channels > 2) throw new Error(`Opus with ${channels} channels is not read (mono or stereo only)`);
  const preSkip = head.readUInt16LE(10);
  const dec = new OpusCodec(48000, channels);
  const pieces: Float32Array[] = [];
  let total = 0;
  try {
    for (const [n, packet] of packets.slice(2).entries()) {
      if (n % PACKETS_PER_TURN === PACKETS_PER_TURN - 1) await nextTurn();
      if (total >= preSkip + maxFrames) break;
      if (packet.length === 0) continue;
      const pcm = dec.decode(packet);
      const frames = pcm.length / 2 / channels;
      const out = new Float32Array(frames);
      for (let i = 0; i < frames; i++) {
        let s = 0;
        for (let c = 0; c < channels; c++) s += pcm.readInt16LE((i * channels + c) * 2);
        out[i] = s / channels / 32768;
      }
      pieces.push(out);
      total += frames;
    }
  } finally {
    dec.free();
  }
  const all = new Float32Array(total);
  let o = 0;
  for (const p of pieces) {
    all.set(p, o);
    o += p.length;
  }
  const end = lastGranule > preSkip ? Math.min(total, lastGranule) : total;
  const start = Math.min(preSkip, end);
  return { samples: all.slice(start, Math.min(end, start + maxFrames)), sampleRate: 48000 };
}
