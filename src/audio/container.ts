/**
 * Containers of uploaded audio, recognised from the bytes alone, and their duration read from the
 * container's own metadata or frame headers (never by decoding the audio): WAV/RF64 data size, AIFF
 * `COMM`, FLAC `STREAMINFO`, MP3 Xing/Info/VBRI or a frame count, AAC ADTS frames, MP4 `mdhd`, the
 * last Ogg granule less the Opus pre-skip. Reads go through a ByteSource, so a 50 MB file on disk is
 * touched only where its headers are.
 */
import { readAdts, readFlac, readMp3 } from './container/frames.js';
import { readMp4, readOgg } from './container/boxes.js';
import { readAiff, readWavInfo } from './container/pcm.js';
import { ascii, ContainerError, id3Length, isAdtsSync, isMp3Sync, type ByteSource, type Container, type ContainerInfo } from './container/source.js';

export { bufferSource, ContainerError, type ByteSource, type Container, type ContainerInfo } from './container/source.js';
export { aiffLayout, extended80 } from './container/pcm.js';

/** The container of the bytes, by magic numbers only; null when it is none of the listed ones. */
export function sniffContainer(src: ByteSource): Container | null {
  const h = src.bytes(0, 16);
  if ((ascii(h, 0, 'RIFF') || ascii(h, 0, 'RF64')) && ascii(h, 8, 'WAVE')) return 'wav';
  if (ascii(h, 0, 'FORM') && (ascii(h, 8, 'AIFF') || ascii(h, 8, 'AIFC'))) return 'aiff';
  if (ascii(h, 0, 'fLaC')) return 'flac';
  if (ascii(h, 4, 'ftyp')) return 'm4a';
  if (ascii(h, 0, 'OggS')) return 'ogg';
  const tag = id3Length(src);
  const at = tag ? src.bytes(tag, 4) : h;
  if (isAdtsSync(at)) return 'aac';
  if (isMp3Sync(at)) return 'mp3';
  // An ID3 tag announces MPEG audio even when padding precedes the first frame.
  return tag ? 'mp3' : null;
}

/** Container, codec, duration, rate and channels; throws ContainerError. */
export function readContainer(src: ByteSource): ContainerInfo {
  if (!src.size) throw new ContainerError('unsupported', 'the file is empty');
  const container = sniffContainer(src);
  switch (container) {
    case 'wav':
      return readWavInfo(src);
    case 'aiff':
      return readAiff(src);
    case 'flac':
      return readFlac(src);
    case 'mp3':
      return readMp3(src);
    case 'aac':
      return readAdts(src);
    case 'm4a':
      return readMp4(src);
    case 'ogg':
      return readOgg(src);
    default:
      throw new ContainerError('unsupported', 'unrecognised audio format');
  }
}
