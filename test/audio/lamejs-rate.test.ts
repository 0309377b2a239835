import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLamejs, runLamejs, withOutputRate, type LamejsModule } from '../../src/audio/lamejs.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { mp3Frames } from '../helpers/mp3.js';

const FILE = join(dirname(createRequire(import.meta.url).resolve('@breezystack/lamejs')), 'lamejs.js');
/** The package's module as published: without the output-rate assignment (the copy here may be patched on disk). */
const PUBLISHED = readFileSync(FILE, 'utf8').replace(/\b(\w+)\.out_samplerate = (\w+), (\1\.brate = )/, '$3');

function encode(lame: LamejsModule, rate: number, kbps: number, seconds: number): Buffer {
  const enc = new lame.Mp3Encoder(1, rate, kbps);
  const pcm = new Int16Array(rate * seconds);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate));
  return Buffer.concat([enc.encodeBuffer(pcm), enc.flush()].map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
}

describe('lamejs keeps the requested sample rate without an install script', () => {
  it('run through the loader, the published module keeps the rate of a low bit rate (44.1 kHz at 56 kbit/s, which the MP3 writer gives lamejs)', async () => {
    expect(PUBLISHED).not.toMatch(/out_samplerate = \w+, \w+\.brate/);
    const fixed = encode(runLamejs(PUBLISHED, FILE), 44100, 56, 1);
    expect(mp3Frames(fixed)[0]!.rate).toBe(44100);
    const probe = await ffprobe(fixed, { ext: 'mp3' });
    expect(probe.sampleRate).toBe(44100);
    expect(probe.durationMs).toBeGreaterThan(950);
    expect(probe.durationMs).toBeLessThan(1150);
  });

  it('the fix is what makes the difference: the published source, run as it is, writes 44.1 kHz at 56 kbit/s as 32 kHz', () => {
    const rewritten = withOutputRate(PUBLISHED);
    expect(rewritten.ok).toBe(true);
    // Run unfixed: the same module text, with only its export statement made a return.
    const unfixed = new Function(
      `'use strict';${PUBLISHED.replace(/\bexport\s*\{([^}]*)\}\s*;?\s*$/, (_m, list: string) => `return {${list.replace(/(\w+) as (\w+)/g, '$2: $1')}};`)}`,
    )() as LamejsModule;
    expect(mp3Frames(encode(unfixed, 44100, 56, 1))[0]!.rate).toBe(32000);
  });

  it('loads the installed package once, and refuses a release where the place is not found', () => {
    expect(loadLamejs()).toBe(loadLamejs());
    expect(mp3Frames(encode(loadLamejs(), 24000, 56, 1))[0]).toMatchObject({ rate: 24000, kbps: 56 });
    expect(withOutputRate('export { a as Mp3Encoder };')).toEqual({ ok: false, reason: 'the place where Mp3Encoder sets its input rate was not found' });
    expect(() => runLamejs('var a = 1; export { a as Mp3Encoder };', 'lamejs.js')).toThrow(
      '@breezystack/lamejs (lamejs.js): cannot keep the requested sample rate: the place where Mp3Encoder sets its input rate was not found',
    );
  });
});
