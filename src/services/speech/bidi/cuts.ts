/**
 * Where the bidirectional socket cuts its text into sentences (speech-current.md rule E6), as one pure
 * function over the buffered text: protected spans, sentence-final marks (with `；`, runs and closing
 * quotes, the decimal point), secondary marks once a clause is long enough, and the forced split at
 * the length cap. The timers that cut a waiting tail live in buffer.ts.
 */

export interface CutSettings {
  /** Non-space code points a clause needs before a secondary mark may end it. */
  minClauseChars: number;
  /** Code points after which a sentence is split by force. */
  maxSentenceChars: number;
}

export type CutReason = 'final' | 'secondary' | 'forced' | 'silence' | 'backstop' | 'flush';

export interface Cut {
  /** The sentence, without the whitespace around it. */
  text: string;
  reason: CutReason;
  /** True when the fragment has nothing to pronounce: it is dropped without sentence events. */
  dropped: boolean;
}

/** `task_continue` description of the bidi page: `；` is final there (E6). */
const FINAL = new Set(['。', '！', '？', '…', '；', '!', '?', '.', '\n']);
const SECONDARY = new Set(['，', '、', '：', ',', ';', ':']);
/** Closing quotes and brackets that stay with the final marks before them. */
const CLOSERS = new Set(['"', "'", '”', '’', '」', '』', '）', ')', ']', '】', '}', '》', '〉', '»']);
const DIGIT = /^[0-9]$/;
const SPACE = /^\s$/u;
const PRONOUNCEABLE = /[\p{L}\p{N}]/u;

/** A protected span `[start, end)`; `end` is null while it is not closed yet. */
interface Span {
  start: number;
  end: number | null;
}

/** Pause markers `<#…#>`, parenthesised tags or pronunciation annotations `(…)`, formulas `$$…$$`. */
export function protectedSpans(chars: string[]): Span[] {
  const spans: Span[] = [];
  const find = (from: number, close: string[]): number | null => {
    for (let j = from; j <= chars.length - close.length; j++) if (close.every((c, k) => chars[j + k] === c)) return j + close.length;
    return null;
  };
  for (let i = 0; i < chars.length; i++) {
    let end: number | null | undefined;
    if (chars[i] === '<' && chars[i + 1] === '#') end = find(i + 2, ['#', '>']);
    else if (chars[i] === '(') end = find(i + 1, [')']);
    else if (chars[i] === '$' && chars[i + 1] === '$') end = find(i + 2, ['$', '$']);
    if (end === undefined) continue;
    spans.push({ start: i, end });
    if (end === null) break; // an unclosed span runs to the end of the buffer
    i = end - 1;
  }
  return spans;
}

export function nonSpaceCount(chars: string[], from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (!SPACE.test(chars[i]!)) n++;
  return n;
}

function cutOf(chars: string[], from: number, to: number, reason: CutReason): Cut {
  const text = chars.slice(from, to).join('').trim();
  return { text, reason, dropped: !PRONOUNCEABLE.test(text) };
}

/**
 * Cuts `text` by the rules of E6. Returns the sentences found and the tail that waits for more text
 * (or a timer). With `flush`, the tail also becomes a sentence (`task_flush`, `task_finish`, a timer),
 * and a `.` after a digit at the very end counts as final.
 */
export function cutSentences(text: string, settings: CutSettings, flush?: CutReason): { cuts: Cut[]; rest: string } {
  const chars = [...text];
  const n = chars.length;
  const spans = protectedSpans(chars);
  const spanAt = new Map(spans.map((s) => [s.start, s]));
  const inside = (pos: number) => spans.find((s) => pos > s.start && (s.end === null || pos < s.end));
  // Non-space code points before each position, so a clause is measured in constant time.
  const nonSpaceBefore = [0];
  for (const c of chars) nonSpaceBefore.push(nonSpaceBefore.at(-1)! + (SPACE.test(c) ? 0 : 1));
  const cuts: Cut[] = [];
  let start = 0;
  let i = 0;
  const cut = (to: number, reason: CutReason) => {
    cuts.push(cutOf(chars, start, to, reason));
    start = to;
    i = to;
  };
  /** At the cap: the last whitespace in the second half of the span, else the cap itself, never inside a protected span. */
  const forced = () => {
    const cap = start + settings.maxSentenceChars;
    for (let w = cap - 1; w >= start + Math.ceil(settings.maxSentenceChars / 2); w--) {
      if (SPACE.test(chars[w]!) && !inside(w)) return cut(w, 'forced');
    }
    const span = inside(cap);
    if (!span) return cut(cap, 'forced');
    if (span.start > start) return cut(span.start, 'forced');
    if (span.end !== null) return cut(span.end, 'forced');
    i = n; // one unclosed span from the start of the sentence: it waits to be closed (or for a timer)
  };
  while (i < n) {
    const span = spanAt.get(i);
    if (span) {
      if (span.end === null) break; // waits for its closing mark
      i = span.end;
    } else {
      const c = chars[i]!;
      if (FINAL.has(c) && !(c === '.' && i > 0 && DIGIT.test(chars[i - 1]!) && i + 1 < n && DIGIT.test(chars[i + 1]!))) {
        // A `.` after a digit at the end of the buffer may be a decimal point still being typed.
        if (c === '.' && i > 0 && DIGIT.test(chars[i - 1]!) && i + 1 === n && !flush) break;
        let j = i + 1;
        while (j < n && (FINAL.has(chars[j]!) || CLOSERS.has(chars[j]!))) j++;
        cut(j, 'final');
        continue;
      }
      i++;
      if (SECONDARY.has(c) && nonSpaceBefore[i]! - nonSpaceBefore[start]! >= settings.minClauseChars) {
        cut(i, 'secondary');
        continue;
      }
    }
    if (i - start >= settings.maxSentenceChars) forced();
  }
  const rest = chars.slice(start).join('');
  if (flush && rest.trim()) return { cuts: [...cuts, cutOf(chars, start, n, flush)], rest: '' };
  return { cuts, rest: flush ? '' : rest };
}
