import { describe, expect, it } from 'vitest';
import { DEFAULT_BUFFER_SETTINGS, SentenceBuffer, type TimerPort, type WindowName } from '../../src/services/speech/bidi/buffer.js';
import { cutSentences, type Cut } from '../../src/services/speech/bidi/cuts.js';

const S = DEFAULT_BUFFER_SETTINGS;
const texts = (text: string, settings = S) => cutSentences(text, settings).cuts.map((c) => c.text);

/** A clock a test moves by hand. */
function fakeClock(): TimerPort & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { due: number; fn: () => void }>();
  return {
    now: () => now,
    after(ms, fn) {
      timers.set(next, { due: now + ms, fn });
      return next++;
    },
    cancel(id) {
      if (id !== null) timers.delete(id);
    },
    advance(ms) {
      now += ms;
      for (const [id, t] of [...timers].sort((a, b) => a[1].due - b[1].due)) {
        if (t.due <= now && timers.has(id)) {
          timers.delete(id);
          t.fn();
        }
      }
    },
    pending: () => timers.size,
  };
}

function buffer(settings = S) {
  const clock = fakeClock();
  const fired: { window: WindowName; cuts: Cut[] }[] = [];
  const b = new SentenceBuffer(settings, clock, (window, cuts) => fired.push({ window, cuts }));
  return { b, clock, fired };
}

describe('sentence-final marks (E6)', () => {
  it('each final mark cuts at once; the tail waits', () => {
    const r = cutSentences('Hello. How are you? Fine! 好。对！吗？嗯…终于；Next', S);
    expect(r.cuts.map((c) => c.text)).toEqual(['Hello.', 'How are you?', 'Fine!', '好。', '对！', '吗？', '嗯…', '终于；']);
    expect(r.cuts.every((c) => c.reason === 'final')).toBe(true);
    expect(r.rest).toBe('Next');
  });

  it('the full-width semicolon is final, the half-width one is secondary', () => {
    expect(texts('短；长')).toEqual(['短；']);
    expect(texts('short; long')).toEqual([]);
  });

  it('a newline is final, and a run of newlines stays together', () => {
    expect(cutSentences('Line one\n\nLine two', S)).toEqual({ cuts: [{ text: 'Line one', reason: 'final', dropped: false }], rest: 'Line two' });
  });

  it('a run of final marks and closing quotes or brackets stay with the sentence', () => {
    expect(texts('Really?!" he said… Yes.) And')).toEqual(['Really?!"', 'he said…', 'Yes.)']);
    expect(texts('他说：“好的。”然后')).toEqual(['他说：“好的。”']);
    expect(texts('Wait... what')).toEqual(['Wait...']);
  });

  it('a decimal point is not final; a dot after a digit at the end waits for the next character', () => {
    expect(texts('Pi is 3.14 exactly. More')).toEqual(['Pi is 3.14 exactly.']);
    expect(cutSentences('It costs 3.', S)).toEqual({ cuts: [], rest: 'It costs 3.' });
    expect(texts('It costs 3. Next')).toEqual(['It costs 3.']);
  });

  it('3.14 sent as "3." then "14" stays whole', () => {
    const { b } = buffer();
    expect(b.append('Pi is 3.')).toEqual([]);
    expect(b.append('14 exactly. ').map((c) => c.text)).toEqual(['Pi is 3.14 exactly.']);
  });
});

describe('protected spans (E6)', () => {
  it('a cut never falls inside a pause marker, a parenthesised tag or a formula', () => {
    expect(texts('Wait <#0.5#> then go. Next')).toEqual(['Wait <#0.5#> then go.']);
    expect(texts('He laughs (laughs. loudly) and stops. Next')).toEqual(['He laughs (laughs. loudly) and stops.']);
    expect(texts('The sum $$a. b! c$$ holds. Next')).toEqual(['The sum $$a. b! c$$ holds.']);
  });

  it('an unclosed span at the end waits for more text', () => {
    expect(cutSentences('Look (a tag. still open', S)).toEqual({ cuts: [], rest: 'Look (a tag. still open' });
    expect(cutSentences('A formula $$x. y', S).cuts).toEqual([]);
    expect(cutSentences('A pause <#0.', S).cuts).toEqual([]);
    const { b } = buffer();
    expect(b.append('Look (a tag. ')).toEqual([]);
    expect(b.append('closed) now. Rest').map((c) => c.text)).toEqual(['Look (a tag. closed) now.']);
    expect(b.pending).toBe(' Rest');
  });
});

describe('secondary marks and bidi.min_clause_chars (E6)', () => {
  it('a secondary mark cuts only once the clause has enough non-space characters', () => {
    expect(texts('Short, still short, ')).toEqual([]);
    // 20 non-space code points up to the mark, the mark included (spaces do not count).
    expect(texts('abcde fghij klmno pqrs, rest')).toEqual(['abcde fghij klmno pqrs,']);
    expect(texts('abcde fghij klmno pqr, rest')).toEqual([]);
    expect(texts('一二三四五六七八九十一二三四五六七八九、后面')).toEqual(['一二三四五六七八九十一二三四五六七八九、']);
    expect(texts('一二三四五六七八九十一二三四五六七八、后面')).toEqual([]);
  });

  it('every secondary mark counts: ，、：,;:', () => {
    for (const mark of ['，', '、', '：', ',', ';', ':']) expect(texts(`${'x'.repeat(19)}${mark}y`), mark).toEqual([`${'x'.repeat(19)}${mark}`]);
  });

  it('the setting moves the threshold', () => {
    expect(texts('Short, rest', { ...S, minClauseChars: 5 })).toEqual(['Short,']);
  });
});

describe('forced split at bidi.max_sentence_chars (E6)', () => {
  it('cuts at the last whitespace in the second half of the span', () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${String(i).padStart(2, '0')}`).join(' '); // 239 code points
    const r = cutSentences(words, S);
    expect(r.cuts).toHaveLength(1);
    expect(r.cuts[0]!.reason).toBe('forced');
    const first = r.cuts[0]!.text;
    expect([...first].length).toBeLessThanOrEqual(200);
    expect([...first].length).toBeGreaterThan(100);
    expect(words.startsWith(first)).toBe(true);
    expect(words[first.length]).toBe(' ');
  });

  it('without whitespace, exactly at the cap', () => {
    const r = cutSentences('x'.repeat(450), S);
    expect(r.cuts.map((c) => c.text.length)).toEqual([200, 200]);
    expect(r.rest).toBe('x'.repeat(50));
  });

  it('never inside a protected span: the cut moves before it', () => {
    const text = `${'x'.repeat(195)}(laughs)${'y'.repeat(20)}`;
    const r = cutSentences(text, S);
    expect(r.cuts[0]!.text).toBe('x'.repeat(195));
    expect(r.rest.startsWith('(laughs)')).toBe(true);
  });

  it('the setting moves the cap', () => {
    expect(texts('abcdefghij', { ...S, maxSentenceChars: 4 })).toEqual(['abcd', 'efgh']);
  });
});

describe('dropped fragments (E6)', () => {
  it('a fragment with nothing to pronounce is marked dropped', () => {
    const r = cutSentences('Hi. ... !? Go.', S);
    expect(r.cuts.map((c) => [c.text, c.dropped])).toEqual([
      ['Hi.', false],
      ['...', true],
      ['!?', true],
      ['Go.', false],
    ]);
  });
});

describe('flush (E8)', () => {
  it('cuts by the rules first, then the rest becomes the last sentence', () => {
    const { b } = buffer();
    b.append('One. Two, and three');
    expect(b.pending).toBe(' Two, and three');
    const cuts = b.flush();
    expect(cuts.map((c) => [c.text, c.reason])).toEqual([['Two, and three', 'flush']]);
    expect(b.pending).toBe('');
    expect(b.windows).toEqual({ silence: null, backstop: null });
  });

  it('a dot after a digit at the end is final on flush; an unclosed span is flushed whole', () => {
    expect(cutSentences('It costs 3.', S, 'flush').cuts.map((c) => c.text)).toEqual(['It costs 3.']);
    expect(cutSentences('Open (tag', S, 'flush').cuts.map((c) => c.text)).toEqual(['Open (tag']);
    expect(cutSentences('   ', S, 'flush').cuts).toEqual([]);
  });
});

describe('silence and backstop windows on an injected clock (E6)', () => {
  it('a tail of at least bidi.min_tail_chars becomes a sentence after bidi.silence_ms', () => {
    const { b, clock, fired } = buffer();
    b.append('A tail without any end');
    clock.advance(599);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([{ window: 'silence', cuts: [{ text: 'A tail without any end', reason: 'silence', dropped: false }] }]);
    expect(clock.pending()).toBe(0);
  });

  it('new text restarts both windows', () => {
    const { b, clock, fired } = buffer();
    b.append('A tail without');
    clock.advance(500);
    b.append(' any end yet');
    clock.advance(500);
    expect(fired).toEqual([]);
    clock.advance(100);
    expect(fired.map((f) => f.cuts[0]!.text)).toEqual(['A tail without any end yet']);
  });

  it('a shorter tail waits for bidi.backstop_ms', () => {
    const { b, clock, fired } = buffer();
    b.append('Half a wo');
    clock.advance(600);
    expect(fired).toEqual([{ window: 'silence', cuts: [] }]);
    expect(b.pending).toBe('Half a wo');
    clock.advance(4_399);
    expect(fired).toHaveLength(1);
    clock.advance(1);
    expect(fired[1]).toEqual({ window: 'backstop', cuts: [{ text: 'Half a wo', reason: 'backstop', dropped: false }] });
  });

  it('a buffer left empty by a cut arms no window; drop stops them', () => {
    const { b, clock } = buffer();
    b.append('Done.');
    expect(clock.pending()).toBe(0);
    b.append('Waiting');
    expect(clock.pending()).toBe(2);
    expect(b.windows).toEqual({ silence: 600, backstop: 5_000 });
    expect(b.drop()).toBe('Waiting');
    expect(clock.pending()).toBe(0);
  });

  it('the settings move the windows and the tail length', () => {
    const { b, clock, fired } = buffer({ ...S, silenceMs: 50, minTailChars: 3, backstopMs: 80 });
    b.append('abc');
    clock.advance(50);
    expect(fired[0]!.cuts.map((c) => c.text)).toEqual(['abc']);
  });
});
