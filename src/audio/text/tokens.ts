// Text -> tokens (words, tags, pause markers) with the separators between them.
// Offsets are Unicode code point offsets into the original text.
import { speakLatex } from './latex.js';
import { readNumberAt, type Lang } from './normalize.js';

export const TAG_NAMES = [
  'laughs',
  'chuckles',
  'gasps',
  'sighs',
  'inhales',
  'breath',
  'exhale',
  'coughs',
  'clears throat',
  'sniffles',
  'snorts',
  'hisses',
  'tsks',
  'groans',
] as const;
export type TagName = (typeof TAG_NAMES)[number];

/** A spoken unit: one tone burst. Latin words last `letters`/14 s, CJK syllables 0.22 s. */
export type Unit = { kind: 'latin'; letters: number } | { kind: 'cjk' };

/** Pause class of the separators before a token: larger wins. */
export type Gap = 'tight' | 'space' | 'comma' | 'sentence' | 'newline';
export const GAP_RANK: Record<Gap, number> = { tight: 0, space: 1, comma: 2, sentence: 3, newline: 4 };

interface TokenBase {
  start: number;
  end: number;
  /** End of the token plus the punctuation glued to it ("world." -> after the dot). */
  tailEnd: number;
  /** Largest pause class of the separators before this token. */
  gapBefore: Gap;
  /** A sentence ends before this token. */
  sentenceBefore: boolean;
}
export type Token =
  | (TokenBase & { kind: 'word'; units: Unit[]; spoken?: string })
  | (TokenBase & { kind: 'tag'; name: TagName })
  | (TokenBase & { kind: 'pause'; seconds: number });

export interface TextOptions {
  textNormalization?: boolean;
  pauseMarkers?: boolean;
  tags?: boolean;
  /** Parenthesized interjections (`(laughs)`) and the tag sound each one makes; others are read. */
  interjections?: Readonly<Record<string, TagName>>;
  latex?: boolean;
  pronunciations?: { text: string; replacement: string }[];
}

export interface Tokenized {
  /** Code point index -> UTF-16 index into the text (one entry per code point, and one for the end). */
  u16At: Int32Array;
  tokens: Token[];
  /** Pause class of the separators after the last token. */
  trailing: Gap;
}

const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const LETTER_RE = /[\p{L}\p{M}]/u;
const ALNUM_RE = /[\p{L}\p{N}]/u;
const F_CJK = 1;
const F_LETTER = 2;
const F_ALNUM = 4;
const F_HAN = 8;
const classes = new Map<string, number>();
/** Character class flags, memoised (Unicode property regexes are slow per character). */
function flags(c: string): number {
  let f = classes.get(c);
  if (f === undefined) {
    f = (CJK_RE.test(c) ? F_CJK : 0) | (LETTER_RE.test(c) ? F_LETTER : 0) | (ALNUM_RE.test(c) ? F_ALNUM : 0) | (/\p{Script=Han}/u.test(c) ? F_HAN : 0);
    if (classes.size < 65536) classes.set(c, f);
  }
  return f;
}
const CJK = { test: (c: string) => c !== '' && (flags(c) & F_CJK) !== 0 };
const LETTER = { test: (c: string) => c !== '' && (flags(c) & F_LETTER) !== 0 };
const isAlnum = (c: string) => c !== '' && (flags(c) & F_ALNUM) !== 0;
const isHan = (c: string) => (flags(c) & F_HAN) !== 0;
const COMMA = new Set([...',;:、，；：—–']);
const SENTENCE = new Set([...'.!?。！？…‼⁇']);

/** Spoken units of a spoken text: space-separated Latin words, CJK characters one by one. */
export function unitsOf(spoken: string): Unit[] {
  const units: Unit[] = [];
  for (const piece of spoken.split(/\s+/)) {
    let letters = 0;
    for (const c of piece) {
      if (CJK.test(c)) {
        if (letters) units.push({ kind: 'latin', letters });
        letters = 0;
        units.push({ kind: 'cjk' });
      } else if (isAlnum(c)) letters++;
    }
    if (letters) units.push({ kind: 'latin', letters });
  }
  return units;
}

function replacementUnits(replacement: string): Unit[] {
  const syllables = /^(\([^()]+\))+$/.test(replacement.trim()) ? replacement.match(/\(/g)!.length : 0;
  if (syllables) return Array.from({ length: syllables }, () => ({ kind: 'cjk' as const }));
  return unitsOf(replacement);
}

interface Special {
  start: number; // UTF-16
  end: number;
  make: () => { kind: 'word'; units: Unit[]; spoken?: string } | { kind: 'tag'; name: TagName } | { kind: 'pause'; seconds: number };
}

function specials(text: string, o: TextOptions): Special[] {
  const found: Special[] = [];
  const add = (re: RegExp, make: (m: RegExpExecArray) => Special['make'] | null) => {
    for (const m of text.matchAll(re)) {
      const mk = make(m as RegExpExecArray);
      if (mk) found.push({ start: m.index!, end: m.index! + m[0].length, make: mk });
    }
  };
  if (o.pauseMarkers) add(/<#(\d+(?:\.\d+)?)#>/g, (m) => () => ({ kind: 'pause', seconds: Number(m[1]) }));
  if (o.latex)
    add(/\$\$([\s\S]*?)\$\$/g, (m) => () => {
      const spoken = speakLatex(m[1]!);
      return { kind: 'word', units: unitsOf(spoken), spoken };
    });
  if (o.tags)
    add(/\[([A-Za-z][A-Za-z ]*)\]/g, (m) => {
      const name = m[1]!.toLowerCase().trim() as TagName;
      return TAG_NAMES.includes(name) ? () => ({ kind: 'tag', name }) : null;
    });
  const interjections = o.interjections;
  if (interjections)
    add(/\(([A-Za-z][A-Za-z-]*)\)/g, (m) => {
      const name = Object.hasOwn(interjections, m[1]!) ? interjections[m[1]!] : undefined;
      return name ? () => ({ kind: 'tag', name }) : null;
    });
  for (const p of o.pronunciations ?? []) {
    if (!p.text) continue;
    let at = text.indexOf(p.text);
    while (at >= 0) {
      found.push({ start: at, end: at + p.text.length, make: () => ({ kind: 'word', units: replacementUnits(p.replacement), spoken: p.replacement }) });
      at = text.indexOf(p.text, at + p.text.length);
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Special[] = [];
  for (const s of found) if (!kept.length || s.start >= kept[kept.length - 1]!.end) kept.push(s);
  return kept;
}

/** Han characters against other letters in a piece of text. */
function hanBalance(piece: string): { han: number; other: number } {
  let han = 0;
  let other = 0;
  for (const c of piece) {
    if (isHan(c)) han++;
    else if (LETTER.test(c)) other++;
  }
  return { han, other };
}

/**
 * The language numbers are read in: Chinese when Han characters dominate around the number, else
 * in the whole text (`whole` is computed once per text: per number it made long texts quadratic).
 */
function langAt(text: string, i: number, whole: () => Lang): Lang {
  const { han, other } = hanBalance(text.slice(Math.max(0, i - 24), i + 24));
  if (han + other === 0) return whole();
  return han > other ? 'zh' : 'en';
}

/** How many loop turns run between two pauses of stepped work. */
export const STEP_CHARS = 512;

/** Work that pauses (`yield`) now and then so a caller can let the event loop run. */
export type Steps<T> = Generator<void, T, void>;

/** Runs stepped work to its end at once. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Tokenizes in steps of STEP_TOKENS characters' worth of tokens. */
export function* tokenizeSteps(text: string, o: TextOptions): Steps<Tokenized> {
  // UTF-16 index -> code point index.
  const cpAt = new Int32Array(text.length + 1);
  const u16Offsets = new Int32Array(text.length + 1);
  const cps: string[] = [];
  for (let i = 0; i < text.length;) {
    const c = String.fromCodePoint(text.codePointAt(i)!);
    for (let k = 0; k < c.length; k++) cpAt[i + k] = cps.length;
    u16Offsets[cps.length] = i;
    cps.push(c);
    i += c.length;
  }
  cpAt[text.length] = cps.length;
  u16Offsets[cps.length] = text.length;
  const u16At = u16Offsets.subarray(0, cps.length + 1);

  let wholeLang: Lang | null = null;
  const whole = (): Lang => {
    if (!wholeLang) {
      const { han, other } = hanBalance(text);
      wholeLang = han > other ? 'zh' : 'en';
    }
    return wholeLang;
  };
  const tokens: Token[] = [];
  let gap: Gap = 'tight';
  let sentence = false;
  let sawSeparator = false;
  const bump = (g: Gap) => {
    if (GAP_RANK[g] > GAP_RANK[gap]) gap = g;
  };
  const push = (start: number, end: number, t: Special['make'] extends () => infer R ? R : never) => {
    const prev = tokens[tokens.length - 1];
    let g: Gap = gap;
    // Without any separator, only two CJK syllables sit tight; anything else needs a word gap.
    if (!sawSeparator && g === 'tight' && !(prev?.kind === 'word' && CJK.test(text[start] ?? '') && CJK.test(cps[prev.end - 1] ?? ''))) g = 'space';
    if (sawSeparator && g === 'tight') g = 'space';
    const tok = t as Token;
    tok.start = cpAt[start]!;
    tok.end = cpAt[end]!;
    tok.tailEnd = tok.end;
    tok.gapBefore = g;
    tok.sentenceBefore = sentence;
    tokens.push(tok);
    gap = 'tight';
    sentence = false;
    sawSeparator = false;
  };
  const spec = specials(text, o);
  let si = 0;
  let i = 0;
  let glued = true; // punctuation right after a token (no whitespace yet) belongs to its tail
  let steps = 0;
  while (i < text.length) {
    if (++steps % STEP_CHARS === 0) yield;
    if (si < spec.length && spec[si]!.start === i) {
      const s = spec[si++]!;
      push(i, s.end, s.make());
      i = s.end;
      glued = true;
      continue;
    }
    const c = String.fromCodePoint(text.codePointAt(i)!);
    const next = text[i + c.length] ?? '';
    const prevChar = i > 0 ? text[i - 1]! : '';
    const numberStart =
      /\d/.test(c) || ('$€£¥'.includes(c) && /\d/.test(next)) || (o.textNormalization && '-−'.includes(c) && /\d/.test(next) && !isAlnum(prevChar));
    if (numberStart) {
      const r = readNumberAt(text, i, langAt(text, i, whole), !!o.textNormalization);
      const end = r ? Math.min(r.end, si < spec.length ? spec[si]!.start : text.length) : i;
      if (r && end > i) {
        push(i, end, { kind: 'word', units: unitsOf(r.spoken), spoken: r.spoken });
        i = end;
        glued = true;
        continue;
      }
    }
    if (CJK.test(c)) {
      push(i, i + c.length, { kind: 'word', units: [{ kind: 'cjk' }] });
      i += c.length;
      glued = true;
      continue;
    }
    if (LETTER.test(c)) {
      let j = i;
      const limit = si < spec.length ? spec[si]!.start : text.length;
      while (j < limit) {
        const d = String.fromCodePoint(text.codePointAt(j)!);
        if (CJK.test(d)) break;
        if (LETTER.test(d) || (/['’]/.test(d) && LETTER.test(text[j + 1] ?? ''))) j += d.length;
        else break;
      }
      push(i, j, { kind: 'word', units: unitsOf(text.slice(i, j)) });
      i = j;
      glued = true;
      continue;
    }
    // A separator.
    sawSeparator = true;
    if (/\s/.test(c)) {
      bump(c === '\n' || c === '\r' ? 'newline' : 'space');
      if (c === '\n' || c === '\r') sentence = true;
      glued = false;
    } else {
      if (COMMA.has(c)) bump('comma');
      else if (SENTENCE.has(c)) {
        bump('sentence');
        sentence = true;
      }
      const last = tokens[tokens.length - 1];
      if (glued && last) last.tailEnd = cpAt[i + c.length]!;
    }
    i += c.length;
  }
  return { u16At, tokens, trailing: GAP_RANK[gap] < GAP_RANK.space ? 'space' : gap };
}
