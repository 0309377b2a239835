/**
 * The audio a listener heard, as mono float samples: the body of `POST /_emulator/hear` read by its
 * Content-Type (audio/mpeg, audio/wav, audio/flac, audio/ogg with Opus or Vorbis, audio/pcm;rate=N of 16-bit
 * little-endian mono), with in-process decoders only, yielding to the event loop between slices.
 * Problems are `HeardAudioError`s naming them.
 */
import { readWav, wavCodecReadable } from '../decode.js';
import { decodeMonoBounded, SLICE_FRAMES } from '../decode-slices.js';
import { nextTurn } from '../event-loop.js';
import { decodeOggOpus } from './ogg-opus.js';
import { decodeOggVorbis, isOggVorbis } from './ogg-vorbis.js';

export class HeardAudioError extends Error {}

/** Largest body read (bytes). */
export const HEAR_MAX_BYTES = 50 * 1024 * 1024;
/** Most sample frames decoded (15 min at 48 kHz): the rest of a longer recording is not heard. */
export const HEAR_MAX_FRAMES = 15 * 60 * 48_000;

export const HEARD_TYPES = ['audio/mpeg', 'audio/wav', 'audio/flac', 'audio/ogg', 'audio/pcm;rate=N'] as const;

/** The media type and its rate parameter, or a HeardAudioError naming what is accepted. */
export function heardFormat(contentType: string | undefined): { type: string; rate?: number } {
  const [typePart = '', ...params] = (contentType ?? '').split(';').map((p) => p.trim());
  const type = typePart.toLowerCase();
  const accepted = `accepted: ${HEARD_TYPES.join(', ')}`;
  const aliases: Record<string, string> = {
    'audio/mp3': 'audio/mpeg',
    'audio/x-wav': 'audio/wav',
    'audio/wave': 'audio/wav',
    'audio/x-flac': 'audio/flac',
    'audio/opus': 'audio/ogg',
  };
  const known = aliases[type] ?? type;
  if (!['audio/mpeg', 'audio/wav', 'audio/flac', 'audio/ogg', 'audio/pcm'].includes(known)) {
    throw new HeardAudioError(`Content-Type ${contentType ? `"${contentType}"` : '(none)'} is not an audio format hear reads (${accepted})`);
  }
  if (known !== 'audio/pcm') return { type: known };
  const rateParam = params.find((p) => /^rate=/i.test(p));
  const rate = rateParam ? Number(rateParam.slice(5)) : NaN;
  if (!Number.isInteger(rate) || rate < 8000 || rate > 192000) {
    throw new HeardAudioError(
      `Content-Type audio/pcm needs rate=N, an integer sample rate from 8000 to 192000 (16-bit little-endian mono), got "${contentType}"`,
    );
  }
  return { type: known, rate };
}

/** Mono samples of the body in the format its Content-Type names. */
export async function decodeHeard(body: Buffer, format: { type: string; rate?: number }): Promise<{ samples: Float32Array; sampleRate: number }> {
  if (body.length === 0) throw new HeardAudioError('the body is empty: send the audio bytes the listener heard');
  const name = format.type === 'audio/pcm' ? `audio/pcm;rate=${format.rate}` : format.type;
  const broken = (why: string) => new HeardAudioError(`the body is not decodable as ${name}: ${why}`);
  let out: { samples: Float32Array; sampleRate: number };
  try {
    switch (format.type) {
      case 'audio/pcm': {
        if (body.length % 2) throw new Error(`16-bit samples need an even byte count, got ${body.length}`);
        const samples = new Float32Array(body.length / 2);
        for (let from = 0; from < samples.length; from += SLICE_FRAMES) {
          const end = Math.min(samples.length, from + SLICE_FRAMES);
          for (let i = from; i < end; i++) samples[i] = body.readInt16LE(i * 2) / 32768;
          await nextTurn();
        }
        out = { samples, sampleRate: format.rate! };
        break;
      }
      case 'audio/wav': {
        const info = readWav(body);
        if (!info) throw new Error('no RIFF/WAVE header with fmt and data chunks');
        if (!wavCodecReadable(info)) throw new Error(`WAV codec ${info.audioFormat} at ${info.bitsPerSample} bits is not read`);
        out = await decodeMonoBounded({ kind: 'wav', bytes: body, layout: info }, HEAR_MAX_FRAMES);
        break;
      }
      case 'audio/mpeg':
        if (!looksLikeMp3(body)) throw new Error('no MPEG audio frame sync or ID3 tag at the start');
        out = await decodeMonoBounded({ kind: 'mp3', bytes: body }, HEAR_MAX_FRAMES);
        break;
      case 'audio/flac':
        if (body.toString('latin1', 0, 4) !== 'fLaC') throw new Error('no fLaC marker at the start');
        out = await decodeMonoBounded({ kind: 'flac', bytes: body }, HEAR_MAX_FRAMES);
        break;
      default:
        if (body.toString('latin1', 0, 4) !== 'OggS') throw new Error('no OggS page at the start');
        out = isOggVorbis(body) ? await decodeOggVorbis(body, HEAR_MAX_FRAMES) : await decodeOggOpus(body, HEAR_MAX_FRAMES);
    }
  } catch (err) {
    throw err instanceof HeardAudioError ? err : broken((err as Error).message);
  }
  if (out.samples.length === 0) throw broken('it holds no samples');
  if (out.sampleRate < 6000) throw broken(`its sample rate ${out.sampleRate} Hz is under 6000 Hz`);
  return out;
}

function looksLikeMp3(b: Buffer): boolean {
  if (b.toString('latin1', 0, 3) === 'ID3') return true;
  // A frame sync within the first 4 KiB (some writers put junk first).
  for (let i = 0; i + 1 < Math.min(b.length, 4096); i++) if (b[i] === 0xff && (b[i + 1]! & 0xe0) === 0xe0) return true;
  return false;
}
