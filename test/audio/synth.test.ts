// The duration model and the timeline: rates, speed, pauses, normalization, word bursts.
import { describe, expect, it } from 'vitest';
import { synthesize, synthesizeStream, type SynthInput } from '../../src/audio/index.js';
import { longestZeroRun } from './helpers.js';

const SR = 16000;
const base = (text: string, over: Partial<SynthInput> = {}): SynthInput => ({
  text,
  voices: [{ id: 'voice-a', weight: 1 }],
  sampleRate: SR,
  channels: 1,
  ...over,
});
const spoken = async (text: string, over: Partial<SynthInput> = {}) => {
  const r = await synthesize(base(text, over));
  const w = r.timeline.words;
  return { r, ms: w[w.length - 1]!.endMs - w[0]!.startMs };
};

describe('duration model', () => {
  it('reads about 14 Latin characters and 4 CJK characters a second', async () => {
    const latin = 'the quick brown fox jumps over the lazy dog again and again and again and again and again';
    expect((await spoken(latin)).ms / 1000).toBeCloseTo(latin.length / 14, 0);
    const cjk = '我们今天一起去公园散步然后回家吃饭';
    expect((await spoken(cjk)).ms / 1000).toBeCloseTo(cjk.length / 4, 0);
  });

  it('speed 2 halves the spoken duration', async () => {
    const text = 'Speed changes how long this sentence takes, and nothing else.';
    const one = await spoken(text);
    const two = await spoken(text, { speed: 2 });
    expect(two.ms / one.ms).toBeCloseTo(0.5, 2);
  });

  it('punctuation pauses: comma < sentence end < newline', async () => {
    const { r } = await spoken('one, two. three\nfour');
    const w = r.timeline.words;
    const gaps = [1, 2, 3].map((i) => w[i]!.startMs - w[i - 1]!.endMs);
    expect(gaps[0]).toBeLessThan(gaps[1]!);
    expect(gaps[1]).toBeLessThan(gaps[2]!);
  });

  it('a pause marker is exactly that much digital silence', async () => {
    const r = await synthesize(base('Before<#1.25#>after', { pauseMarkers: true }));
    const [a, b] = r.timeline.words;
    expect(b!.startMs - a!.endMs).toBe(1250);
    const from = Math.round((a!.endMs * SR) / 1000) - 50;
    const [, run] = longestZeroRun(r.pcm, from, Math.round((b!.startMs * SR) / 1000) + 50);
    expect(run).toBeGreaterThanOrEqual(1.25 * SR);
    expect(run).toBeLessThanOrEqual(1.25 * SR + 0.004 * SR); // only the last fade-out samples that round to 0
  });

  it('text normalization expands numbers, dates and units into words (longer); off reads digits', async () => {
    const off = await spoken('1234567');
    const on = await spoken('1234567', { textNormalization: true });
    expect(on.ms).toBeGreaterThan(1.5 * off.ms);
    const zhOff = await spoken('共1234567元');
    const zhOn = await spoken('共1234567元', { textNormalization: true });
    expect(zhOn.ms).toBeGreaterThan(1.4 * zhOff.ms);
    const date = await spoken('2024-03-15', { textNormalization: true });
    expect(date.r.timeline.words).toHaveLength(1);
    expect((await spoken('5 km', { textNormalization: true })).ms).toBeGreaterThan((await spoken('5 km')).ms);
  });

  it('a long text of numbers without letters takes its language from the whole text', () => {
    // (Its planning speed, once quadratic, is a benchmark matter, not a test's.)
    const text = '12:30 2024-03-15 '.repeat(580);
    expect(synthesizeStream(base(text, { textNormalization: true })).durationMs).toBeGreaterThan(60_000);
    // with no letters near a number, the whole text's script decides its language
    const zh = synthesizeStream(base('共' + ' '.repeat(60) + '15', { textNormalization: true }));
    const en = synthesizeStream(base('so' + ' '.repeat(60) + '15', { textNormalization: true }));
    const numberMs = (r: { timeline: { words: { startMs: number; endMs: number }[] } }) => r.timeline.words.at(-1)!.endMs - r.timeline.words.at(-1)!.startMs;
    expect(numberMs(zh)).toBeCloseTo(470, 0); // 十五: two syllables and the gap between them
    expect(numberMs(en)).toBeCloseTo(500, 0); // fifteen: seven letters
  });

  it('pronunciations change what is spoken, while spans stay on the original text', async () => {
    const plain = await spoken('I say tomato');
    const r = await spoken('I say tomato', { pronunciations: [{ text: 'tomato', replacement: 'tuh may toe toe toe' }] });
    expect(r.ms).toBeGreaterThan(plain.ms);
    const w = r.r.timeline.words.at(-1)!;
    expect([w.text, w.charStart, w.charEnd]).toEqual(['tomato', 6, 12]);
  });

  it('LaTeX formulas are read as spoken formulas; unknown tags are read as words', async () => {
    const withLatex = await spoken('so $$\\frac{a}{b}$$ ok', { latex: true });
    expect(withLatex.r.timeline.words.map((w) => w.text)).toEqual(['so', '$$\\frac{a}{b}$$', 'ok']);
    const tags = await spoken('hi [laughs] [dances]', { tags: true });
    expect(tags.r.timeline.words.map((w) => w.text)).toEqual(['hi', 'dances']);
  });
});

describe('timeline', () => {
  it('word times match the tone bursts in the samples; sentences carry code point spans', async () => {
    const text = 'Hello 😀 world. Second sentence here!';
    const r = await synthesize(base(text));
    const toFrame = (ms: number) => Math.round((ms * SR) / 1000);
    for (const w of r.timeline.words) {
      const s = toFrame(w.startMs);
      const e = toFrame(w.endMs);
      // silence right before and after each burst, sound inside it
      expect(r.pcm.subarray(s - 200, s).every((v) => v === 0)).toBe(true);
      expect(r.pcm.subarray(e, e + 200).every((v) => v === 0)).toBe(true);
      let loud = 0;
      for (let i = s; i < e; i++) loud = Math.max(loud, Math.abs(r.pcm[i]!));
      expect(loud).toBeGreaterThan(3000);
      // the first and last sounding samples are within 5 ms of the reported edges
      let first = s;
      while (r.pcm[first] === 0) first++;
      let last = e - 1;
      while (r.pcm[last] === 0) last--;
      expect(first - s).toBeLessThan(0.005 * SR);
      expect(e - 1 - last).toBeLessThan(0.005 * SR);
    }
    const cps = [...text];
    expect(r.timeline.sentences.map((s) => s.text)).toEqual(['Hello 😀 world.', 'Second sentence here!']);
    for (const s of r.timeline.sentences) expect(cps.slice(s.charStart, s.charEnd).join('')).toBe(s.text);
    expect(r.timeline.words[1]).toMatchObject({ text: 'world', charStart: 8, charEnd: 13 });
  });

  it('splits sentences longer than 50 characters', async () => {
    const r = await synthesize(base('This sentence is long enough, with a comma in it, to need splitting into parts.'));
    for (const s of r.timeline.sentences) expect([...s.text].length).toBeLessThanOrEqual(50);
    expect(r.timeline.sentences.length).toBeGreaterThan(1);
  });

  it('a dialogue gives per-turn spans in order', async () => {
    const { synthesizeDialogue } = await import('../../src/audio/index.js');
    const r = await synthesizeDialogue({
      turns: [
        { text: 'Welcome to the show.', voices: [{ id: 'host', weight: 1 }], speaker: 0 },
        { text: 'Glad to be here.', voices: [{ id: 'guest', weight: 1 }], speaker: 1 },
      ],
      sampleRate: SR,
      channels: 1,
    });
    expect(r.turns!.map((t) => t.speaker)).toEqual([0, 1]);
    expect(r.turns![1]!.startMs - r.turns![0]!.endMs).toBe(400);
    expect(r.timeline.words.at(-1)).toMatchObject({ text: 'here', turn: 1 });
  });
});
