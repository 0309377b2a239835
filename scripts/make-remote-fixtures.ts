/**
 * Writes the offline "remote" audio of fixtures/remote/: speech-like sound (voiced syllable bursts with
 * breathy noise and pauses), made here with plain math rather than by the emulator's synthesizer, so
 * they stand for audio a user recorded. Run: npx tsx scripts/make-remote-fixtures.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function speechLike(seconds: number, rate: number, seed: number): Int16Array {
  const rnd = lcg(seed);
  const out = new Int16Array(Math.round(seconds * rate));
  let t = Math.round(0.2 * rate);
  while (t < out.length) {
    const syllable = Math.round((0.12 + rnd() * 0.2) * rate);
    const f0 = 100 + rnd() * 110;
    const formant = 500 + rnd() * 1500;
    for (let i = 0; i < syllable && t + i < out.length; i++) {
      const x = i / syllable;
      const env = Math.sin(Math.PI * x) ** 2;
      const f = f0 * (1 + 0.08 * Math.sin(2 * Math.PI * 3 * x));
      let v = 0;
      for (let h = 1; h <= 12; h++) {
        const w = Math.exp(-((h * f - formant) ** 2) / (2 * 400 ** 2)) + 0.3 / h;
        v += w * Math.sin((2 * Math.PI * h * f * (t + i)) / rate);
      }
      v += (rnd() - 0.5) * 0.15;
      out[t + i] = Math.round(Math.max(-1, Math.min(1, v * env * 0.25)) * 32767);
    }
    t += syllable + Math.round((rnd() < 0.2 ? 0.3 + rnd() * 0.4 : 0.04 + rnd() * 0.08) * rate);
  }
  return out;
}

function wav(pcm: Int16Array, rate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + pcm.byteLength, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(pcm.byteLength, 40);
  return Buffer.concat([h, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]);
}

const dir = join(import.meta.dirname, '..', 'fixtures', 'remote');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'ref-5s.wav'), wav(speechLike(5, 16000, 5), 16000));
writeFileSync(join(dir, 'ref-40s.wav'), wav(speechLike(40, 16000, 40), 16000));
// An MP3 in name only: an ID3 header followed by bytes no decoder can read.
const broken = Buffer.alloc(4096, 0x5a);
Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1').copy(broken);
writeFileSync(join(dir, 'broken.mp3'), broken);
