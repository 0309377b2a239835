import fc from 'fast-check';
import { adpcmWav, silentFlac } from '../test/helpers/hostile-inputs.js';
import { zipOf } from '../test/helpers/zip.js';

/**
 * Hostile media and archives for `npm run fuzz`, generated from seeded parameters: audio near the
 * decode caps (long silence in a few hundred bytes, IMA ADPCM, MP3 frames), headers that lie about
 * their sizes or hold impossible formats, cut files; zips with escaping names, many entries, bombs of
 * zeros and sizes that lie. Every maker is cheap (kilobytes to a few MB) and cached by its parameters.
 */
const cache = new Map<string, Buffer>();
function cached(key: string, make: () => Buffer): Buffer {
  let b = cache.get(key);
  if (!b) cache.set(key, (b = make()));
  return b;
}

/** A WAV header over `data`, every field given (so any of them can be impossible). */
function wavOf(f: { format: number; channels: number; rate: number; bits: number; blockAlign: number; declared: number }, data: Buffer): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE((36 + f.declared) >>> 0, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(f.format, 20);
  h.writeUInt16LE(f.channels, 22);
  h.writeUInt32LE(f.rate >>> 0, 24);
  h.writeUInt32LE((f.rate * f.blockAlign) >>> 0, 28);
  h.writeUInt16LE(f.blockAlign, 32);
  h.writeUInt16LE(f.bits, 34);
  h.write('data', 36);
  h.writeUInt32LE(f.declared >>> 0, 40);
  return Buffer.concat([h, data]);
}

/** A 300 Hz tone as 16-bit mono PCM at `rate`. */
function tone(seconds: number, rate: number): Buffer {
  const n = Math.round(seconds * rate);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / rate)), i * 2);
  return b;
}

/** MPEG-2 Layer III frames, 8 kbps at 16 kHz mono (36 bytes per 36 ms, silent): an hour in 3.6 MB. */
function mp3Frames(seconds: number, cutLast: boolean): Buffer {
  const frames = Math.ceil((seconds * 16000) / 576);
  const frame = Buffer.alloc(36);
  frame.set([0xff, 0xf3, 0x18, 0xc0]);
  const b = Buffer.alloc(frames * 36);
  for (let i = 0; i < frames; i++) frame.copy(b, i * 36);
  return cutLast ? b.subarray(0, b.length - 17) : b;
}

export type AudioKind = 'wav-lie' | 'wav-format' | 'adpcm' | 'flac' | 'flac-lie' | 'flac-stream' | 'flac-cut' | 'mp3' | 'mp3-cut' | 'truncated' | 'garbage';

export interface Audio {
  kind: AudioKind;
  /** What it holds, in words (for the report). */
  what: string;
  bytes: Buffer;
  ext: string;
  type: string;
}

/** Durations that sit on the caps: detection's head, clone's 10 s and 300 s, recognition's 500 s, decode's 600 s, diarization's 3600 s. */
const NEAR_CAPS = [0.01, 2.9, 3.1, 9.9, 10.1, 299, 301, 499, 501, 599, 601, 3599, 3601, 36_000];

const declaredSize = fc.constantFrom<'true' | 'more' | 'less' | 'zero' | 'max'>('true', 'more', 'less', 'zero', 'max');

/** Generated audio of every kind, its duration near one of the caps. */
export const audio: fc.Arbitrary<Audio> = fc
  .record({
    kind: fc.constantFrom<AudioKind>('wav-lie', 'wav-format', 'adpcm', 'flac', 'flac-lie', 'flac-stream', 'flac-cut', 'mp3', 'mp3-cut', 'truncated', 'garbage'),
    seconds: fc.constantFrom(...NEAR_CAPS),
    declared: declaredSize,
    format: fc.constantFrom(0, 1, 3, 6, 7, 17, 85, 0xfffe, 0xffff),
    channels: fc.constantFrom(0, 1, 2, 8, 65535),
    rate: fc.constantFrom(0, 1, 8000, 16000, 48000, 4_294_967_295),
    bits: fc.constantFrom(0, 4, 7, 8, 16, 24, 32, 64),
    blockAlign: fc.constantFrom(0, 1, 2, 3, 256, 65535),
    cut: fc.integer({ min: 0, max: 200 }),
  })
  .map((p): Audio => {
    // Real samples stay short (at most 20 s of 8 kHz): long durations come from headers, silence frames or lies.
    const held = Math.min(p.seconds, 20);
    switch (p.kind) {
      case 'wav-lie': {
        const data = cached(`tone${held}`, () => tone(held, 8000));
        const declared = { true: data.length, more: Math.round(p.seconds * 16000) * 60, less: 2, zero: 0, max: 0xffffffff }[p.declared];
        return {
          kind: p.kind,
          what: `WAV of ${held} s declaring ${declared} data bytes`,
          bytes: wavOf({ format: 1, channels: 1, rate: 8000, bits: 16, blockAlign: 2, declared }, data),
          ext: 'wav',
          type: 'audio/wav',
        };
      }
      case 'wav-format': {
        const data = cached('tone1', () => tone(1, 8000));
        const f = { format: p.format, channels: p.channels, rate: p.rate, bits: p.bits, blockAlign: p.blockAlign, declared: data.length };
        return { kind: p.kind, what: `WAV fmt ${JSON.stringify(f)}`, bytes: wavOf(f, data), ext: 'wav', type: 'audio/wav' };
      }
      case 'adpcm': {
        const s = Math.min(p.seconds, 190);
        return { kind: p.kind, what: `IMA ADPCM WAV of ${s} s`, bytes: cached(`adpcm${s}`, () => adpcmWav(s)), ext: 'wav', type: 'audio/wav' };
      }
      case 'flac':
      case 'flac-lie':
      case 'flac-stream':
      case 'flac-cut': {
        const declare = p.kind === 'flac-lie' ? 60 : p.kind !== 'flac-stream';
        const b = cached(`flac${p.seconds}${String(declare)}`, () => silentFlac(p.seconds, declare));
        const bytes = p.kind === 'flac-cut' ? b.subarray(0, Math.max(4, b.length - 1 - p.cut)) : b;
        return { kind: p.kind, what: `FLAC of ${p.seconds} s of silence (${p.kind})`, bytes, ext: 'flac', type: 'audio/flac' };
      }
      case 'mp3':
      case 'mp3-cut': {
        const s = Math.min(p.seconds, 3601);
        const bytes = cached(`mp3${s}${p.kind}`, () => mp3Frames(s, p.kind === 'mp3-cut'));
        return { kind: p.kind, what: `MP3 of ${s} s at 8 kbps${p.kind === 'mp3-cut' ? ', last frame cut' : ''}`, bytes, ext: 'mp3', type: 'audio/mpeg' };
      }
      case 'truncated': {
        const whole = wavOf(
          { format: 1, channels: 1, rate: 8000, bits: 16, blockAlign: 2, declared: 16000 },
          cached('tone1', () => tone(1, 8000)),
        );
        return { kind: p.kind, what: `WAV cut to ${p.cut % 60} bytes`, bytes: whole.subarray(0, p.cut % 60), ext: 'wav', type: 'audio/wav' };
      }
      case 'garbage':
        return {
          kind: p.kind,
          what: 'magic bytes then noise',
          bytes: Buffer.concat([Buffer.from(['RIFF', 'fLaC', 'ID3', 'OggS', '\xff\xfb'][p.cut % 5]!, 'latin1'), Buffer.alloc(p.cut * 7, p.cut)]),
          ext: ['wav', 'flac', 'mp3', 'ogg', 'mp3'][p.cut % 5]!,
          type: 'application/octet-stream',
        };
    }
  });

/** Zip entry names that try to leave the folder a tar is unpacked into, or are not names at all. */
const ENTRY_NAMES = [
  'a.txt',
  '../escaped.txt',
  'x/../../../escaped.txt',
  '/etc/escaped.txt',
  'C:\\escaped.txt',
  'a\\..\\..\\escaped.txt',
  './././a.txt',
  'd/',
  '',
  '..',
  'a\u0000b.txt',
  `${'n'.repeat(300)}.txt`,
  'ü/名前.txt',
  'a.txt',
];

/** Texts of an entry: everyday, empty, binary, or pauses that add up near the 3 h caps. */
const ENTRY_TEXTS = ['Hello there.', '', '\u0000\u0001\uffff', `a${'<#99.99#>a'.repeat(60)}`, `a${'<#99.99#>a'.repeat(110)}`];

export interface Archive {
  what: string;
  bytes: Buffer;
}

/** Rewrites every entry's uncompressed size (local and central headers): a zip that lies about what it holds. */
function lieAboutSizes(zip: Buffer, size: number): Buffer {
  const b = Buffer.from(zip);
  for (let i = 0; i + 46 <= b.length; i++) {
    const sig = b.readUInt32LE(i);
    if (sig === 0x04034b50) b.writeUInt32LE(size >>> 0, i + 22);
    else if (sig === 0x02014b50) b.writeUInt32LE(size >>> 0, i + 24);
  }
  return b;
}

/** Generated async-synthesis inputs: names that escape, many entries, zero bombs, lying sizes. */
export const archive: fc.Arbitrary<Archive> = fc
  .record({
    names: fc.array(fc.constantFrom(...ENTRY_NAMES), { minLength: 1, maxLength: 4 }),
    texts: fc.array(fc.constantFrom(...ENTRY_TEXTS), { minLength: 4, maxLength: 4 }),
    many: fc.constantFrom(0, 0, 0, 999, 1001),
    bombMb: fc.constantFrom(0, 0, 0, 8, 64),
    lie: fc.constantFrom(0, 0, 1, 0xffffffff),
    store: fc.boolean(),
  })
  .map((p): Archive => {
    const files: Record<string, string> = {};
    p.names.forEach((n, i) => (files[n] = p.texts[i]!));
    for (let i = 0; i < p.many; i++) files[`m${i}.txt`] = 'Hi.';
    // A bomb: megabytes of one letter, which deflate packs a thousandfold.
    if (p.bombMb) files['bomb.txt'] = 'a'.repeat(p.bombMb * 1048576);
    const key = JSON.stringify({ ...p, lie: 0 });
    let bytes = cached(key, () => zipOf(files, p.store && !p.bombMb ? 'store' : 'deflate'));
    if (p.lie) bytes = lieAboutSizes(bytes, p.lie);
    return {
      what: `zip of ${Object.keys(files).length} entries (${p.names.join(', ').slice(0, 120)}), bomb ${p.bombMb} MB, sizes ${p.lie ? `say ${p.lie}` : 'true'}`,
      bytes,
    };
  });
