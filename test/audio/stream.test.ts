// Streams: chunks concatenate to the whole file, MP3 chunks are whole frames, the first chunk of
// a long text comes quickly, a signal stops the work, and the event loop keeps breathing.
import { describe, expect, it } from 'vitest';
import { encodeAudio, encodeAudioStream, synthesize, synthesizeStream, type AudioFormat, type SynthInput } from '../../src/audio/index.js';
import { countMp3Frames } from '../../src/audio/encode/mp3.js';
import { MAX_BURST_LETTERS, planText } from '../../src/audio/plan.js';
import { tmpFile } from './helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';

const input = (over: Partial<SynthInput> = {}): SynthInput => ({
  text: 'Streams equal whole files. 流式一样。',
  voices: [{ id: 'male-qn-qingse', weight: 1 }],
  sampleRate: 24000,
  channels: 2,
  ...over,
});

async function collect(format: AudioFormat, i: SynthInput, bitrate = 64000) {
  const chunks: Buffer[] = [];
  const stream = encodeAudioStream(format, synthesizeStream(i), { sampleRate: i.sampleRate, channels: i.channels, bitrate });
  for await (const c of stream) chunks.push(c);
  return { chunks, meta: await stream.meta() };
}

describe('streams', () => {
  it('concatenated chunks equal the whole file (WAV/FLAC: except the unknown-length header fields)', async () => {
    const i = input();
    const whole = await synthesize(i);
    for (const format of ['mp3', 'pcm', 'wav', 'flac'] as const) {
      const { chunks, meta } = await collect(format, i);
      const file = await encodeAudio(format, whole, { sampleRate: 24000, channels: 2, bitrate: 64000 });
      const cat = Buffer.concat(chunks);
      expect(chunks.length).toBeGreaterThan(3);
      expect(meta).toEqual(file.meta);
      if (format === 'wav') {
        expect(cat.readUInt32LE(4)).toBe(0xffffffff);
        expect(cat.readUInt32LE(40)).toBe(0xffffffff);
        cat.writeUInt32LE(file.bytes.readUInt32LE(4), 4);
        cat.writeUInt32LE(file.bytes.readUInt32LE(40), 40);
        expect((await ffprobe(tmpFile(Buffer.concat(chunks), 'wav'))).sampleRate).toBe(24000);
      }
      if (format === 'flac') {
        expect(cat.subarray(0, 4).toString('latin1')).toBe('fLaC');
        expect(chunks[0]!.length).toBeGreaterThan(42); // header and at least one frame
        // STREAMINFO bytes 18..25 hold rate/channels/bps/total samples, 26..41 the MD5.
        expect(cat.subarray(26, 42).equals(Buffer.alloc(16))).toBe(true);
        file.bytes.copy(cat, 21, 21, 42);
      }
      expect(cat.equals(file.bytes)).toBe(true);
      if (format === 'pcm' || format === 'wav') for (const c of chunks.slice(1)) expect(c.length % 4).toBe(0);
      if (format === 'mp3')
        for (const c of chunks) {
          expect(c[0]).toBe(0xff);
          expect(c[1]! & 0xe0).toBe(0xe0);
          expect(countMp3Frames(c)).toBeGreaterThan(0); // whole frames only
        }
    }
  });

  it('is deterministic: identical inputs give identical bytes', async () => {
    const a = await collect('mp3', input({ channels: 1, sampleRate: 16000 }));
    const b = await collect('mp3', input({ channels: 1, sampleRate: 16000 }));
    expect(Buffer.concat(a.chunks).equals(Buffer.concat(b.chunks))).toBe(true);
    const c = await collect('mp3', input({ channels: 1, sampleRate: 16000, text: 'Something else.' }));
    expect(Buffer.concat(a.chunks).equals(Buffer.concat(c.chunks))).toBe(false);
  });

  it('gives the first chunk of a 10,000-character text in milliseconds, and stops on abort', async () => {
    const text = 'A long text goes on and on, sentence after sentence. '.repeat(189).slice(0, 9999);
    const ctl = new AbortController();
    const synth = synthesizeStream(input({ text, channels: 1, sampleRate: 32000 }), { signal: ctl.signal });
    expect(synth.durationMs).toBeGreaterThan(600_000); // known up front: ten minutes of speech
    // Counted, not timed: how much PCM had been rendered when the first encoded chunk came out.
    let pulled = 0;
    let pulledAtFirst = -1;
    async function* counted() {
      for await (const block of synth) {
        pulled += block.length;
        yield block;
      }
    }
    const chunks: Buffer[] = [];
    await expect(
      (async () => {
        for await (const c of encodeAudioStream('mp3', counted(), { sampleRate: 32000, channels: 1, bitrate: 128000 })) {
          if (pulledAtFirst < 0) pulledAtFirst = pulled;
          chunks.push(c);
          if (chunks.length === 5) ctl.abort();
        }
      })(),
    ).rejects.toThrow();
    // The first chunk left after at most a few seconds of the ten minutes had been rendered.
    expect(pulledAtFirst).toBeGreaterThan(0);
    expect(pulledAtFirst / 32000).toBeLessThan(5);
    expect(chunks.length).toBe(5);
    await expect(synth.done()).rejects.toThrow();
  });

  it('yields to the event loop all along while synthesizing and encoding (work in slices, not one block)', async () => {
    // Counted, not timed: timings belong to `npm run bench`, which reports the worst stall.
    const text = 'The event loop keeps turning while we work. '.repeat(12);
    let turns = 0;
    let running = true;
    const spin = () => {
      turns++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const synth = synthesizeStream(input({ text, sampleRate: 24000, channels: 1 }));
    const out = encodeAudioStream('mp3', synth, { sampleRate: 24000, channels: 1, bitrate: 128000 });
    let chunks = 0;
    for await (const _ of out) chunks++;
    running = false;
    const durationMs = (await synth.done()).durationMs;
    expect(durationMs).toBeGreaterThan(30_000);
    // At least one turn of the loop per 2 s of audio (slices are far smaller than that).
    expect(turns).toBeGreaterThan(durationMs / 2000);
    expect(chunks).toBeGreaterThan(1);
  }, 60_000);

  it('a word of thousands of letters is voiced in syllable bursts: same length, no long stall', async () => {
    const text = 'a'.repeat(5000);
    const sr = 44100;
    expect(synthesizeStream(input({ text, sampleRate: sr, channels: 1 })).durationMs).toBeCloseTo(560 + (5000 / 14 + 1 / 14) * 1000, 0);
    const plan = planText(text, {}, sr, 0, 0);
    for (const seg of plan.segments) expect(seg.frames).toBeLessThanOrEqual(Math.ceil((MAX_BURST_LETTERS / 14) * sr) + 1);
    expect(plan.segments.reduce((a, s) => a + s.frames, 0)).toBe(Math.round((5000 / 14) * sr));
    // Rendering is per burst, so no slice of work is longer than one burst: the first blocks come in slices.
    let blocks = 0;
    for await (const _ of synthesizeStream(input({ text, sampleRate: sr, channels: 1 }))) if (++blocks === 30) break;
    expect(blocks).toBe(30);
  });
});

describe('planning in slices', () => {
  it('plans a long text in many steps, and the sliced stream equals the plain one', async () => {
    const { planTextSteps } = await import('../../src/audio/plan.js');
    const { synthesizeStreamSliced } = await import('../../src/audio/index.js');
    const text = 'A long text goes on and on, sentence after sentence. '.repeat(189).slice(0, 9999);
    const steps = planTextSteps(text, {}, 32000, 0, 0);
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses++;
    expect(pauses).toBeGreaterThan(10); // counted, not timed: the event loop gets many chances
    expect(r.value.end).toBe(planText(text, {}, 32000, 0, 0).end);
    const i = input({ text: text.slice(0, 600), channels: 1, sampleRate: 16000 });
    const plain = synthesizeStream(i);
    const sliced = await synthesizeStreamSliced(i);
    expect(sliced.durationMs).toBe(plain.durationMs);
    expect(sliced.timeline).toEqual(plain.timeline);
    const bytes = async (s: AsyncIterable<Int16Array>) => {
      const parts: Buffer[] = [];
      for await (const b of s) parts.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
      return Buffer.concat(parts);
    };
    expect((await bytes(sliced)).equals(await bytes(plain))).toBe(true);
  });
});
