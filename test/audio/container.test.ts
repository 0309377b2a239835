// The container reader of uploaded audio: every listed container recognised from its bytes, its duration
// read from metadata or frame headers and compared with ffprobe's, refusals of unknown and broken input.
import { describe, expect, it } from 'vitest';
import { bufferSource, ContainerError, extended80, readContainer, sniffContainer } from '../../src/audio/container.js';
import { decodeHead } from '../../src/audio/head.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { KINDS, toneWav, transcode, type Kind } from '../helpers/transcode.js';

const source = toneWav(3.3, 44100);

const expected: Record<Kind, { container: string; codec: string; decoded: boolean }> = {
  wav: { container: 'wav', codec: 'pcm', decoded: true },
  rf64: { container: 'wav', codec: 'pcm', decoded: true },
  aiff: { container: 'aiff', codec: 'pcm', decoded: true },
  flac: { container: 'flac', codec: 'flac', decoded: true },
  mp3: { container: 'mp3', codec: 'mp3', decoded: true },
  'mp3-noxing': { container: 'mp3', codec: 'mp3', decoded: true },
  aac: { container: 'aac', codec: 'aac', decoded: false },
  m4a: { container: 'm4a', codec: 'aac', decoded: false },
  'm4a-alac': { container: 'm4a', codec: 'alac', decoded: false },
  opus: { container: 'ogg', codec: 'opus', decoded: false },
  vorbis: { container: 'ogg', codec: 'vorbis', decoded: false },
};

describe('readContainer', () => {
  for (const kind of Object.keys(KINDS) as Kind[]) {
    it(`${kind}: container, codec and a duration that agrees with ffprobe's (3.3 s)`, async () => {
      const bytes = await transcode(source, kind);
      const info = readContainer(bufferSource(bytes));
      expect(info.container).toBe(expected[kind].container);
      expect(info.codec).toBe(expected[kind].codec);
      const probe = await ffprobe(bytes, { ext: KINDS[kind].ext });
      // ffprobe trims encoder delay where the container says so; frame counts include it.
      expect(Math.abs(info.duration * 1000 - probe.durationMs)).toBeLessThan(kind.startsWith('mp3') || kind === 'aac' ? 80 : 30);
      expect(Math.abs(info.duration - 3.3)).toBeLessThan(0.08);
      const head = await decodeHead(bufferSource(bytes), info);
      expect(head !== null).toBe(expected[kind].decoded);
      if (head) expect(head.samples.length / head.sampleRate).toBeGreaterThan(1.5);
    });
  }

  it('reads a streamed FLAC (total samples 0) from its last frame header', async () => {
    const bytes = await transcode(source, 'flac');
    const streamed = Buffer.from(bytes);
    // STREAMINFO total samples: the low 36 bits from byte 21 of the file (4 + 4 + 13).
    streamed[21] = streamed[21]! & 0xf0;
    streamed.writeUInt32BE(0, 22);
    expect(readContainer(bufferSource(streamed)).duration).toBeCloseTo(3.3, 2);
  });

  it('an 80-bit extended rate reads as its value', () => {
    const b = Buffer.from([0x40, 0x0e, 0xac, 0x44, 0, 0, 0, 0, 0, 0]);
    expect(extended80(b, 0)).toBe(44100);
  });

  it('unknown bytes (raw PCM, WebM, text) are unsupported; a listed container that is broken is undecodable', () => {
    const kindOf = (b: Buffer) => {
      try {
        readContainer(bufferSource(b));
        return 'ok';
      } catch (e) {
        return (e as ContainerError).kind;
      }
    };
    expect(kindOf(Buffer.alloc(1000, 7))).toBe('unsupported');
    expect(kindOf(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]))).toBe('unsupported');
    expect(kindOf(Buffer.from('hello world, not audio'))).toBe('unsupported');
    expect(kindOf(Buffer.from('fLaC\x00\x00'))).toBe('undecodable');
    expect(kindOf(Buffer.concat([Buffer.from('RIFF\x00\x00\x00\x00WAVE', 'latin1')]))).toBe('undecodable');
    expect(kindOf(Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x08OpusHea', 'latin1'))).toBe(
      'unsupported',
    );
    expect(sniffContainer(bufferSource(Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00', 'latin1')))).toBe('mp3');
  });
});

describe('broken input', () => {
  it('every truncation and byte damage of each container gives a duration or a ContainerError, never another exception', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const kind of Object.keys(KINDS) as Kind[]) {
      const bytes = await transcode(toneWav(0.5, 16000), kind);
      for (let i = 0; i < 60; i++) {
        const damaged = Buffer.from(bytes.subarray(0, Math.floor(random() * bytes.length)));
        for (let j = 0; j < 4 && damaged.length; j++) damaged[Math.floor(random() * Math.min(damaged.length, 256))] = Math.floor(random() * 256);
        try {
          const info = readContainer(bufferSource(damaged));
          expect(Number.isFinite(info.duration), `${kind} #${i}`).toBe(true);
        } catch (e) {
          expect(e, `${kind} #${i}: ${(e as Error).message}`).toBeInstanceOf(ContainerError);
        }
      }
    }
  });
});
