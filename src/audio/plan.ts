// Tokens -> a timed plan: bursts, silences and tag sounds in frames, plus the timeline.
// This is the duration model documented in docs/audio.md.
import { runSteps, STEP_CHARS, tokenizeSteps, type Gap, type Steps, type TagName, type TextOptions, type Token, type Unit } from './text/tokens.js';

export const LATIN_CHAR_S = 1 / 14;
export const CJK_SYLLABLE_S = 0.22;
export const TIGHT_S = 0.03;
export const GAP_S: Record<Gap, number> = { tight: TIGHT_S, space: LATIN_CHAR_S, comma: 0.25, sentence: 0.5, newline: 0.8 };
export const TAG_S: Record<TagName, number> = {
  laughs: 0.9,
  chuckles: 0.6,
  gasps: 0.35,
  sighs: 0.9,
  inhales: 0.5,
  breath: 0.45,
  exhale: 0.6,
  coughs: 0.55,
  'clears throat': 0.6,
  sniffles: 0.4,
  snorts: 0.25,
  hisses: 0.7,
  tsks: 0.2,
  groans: 0.8,
};
const MAX_SENTENCE = 50;
/** Longest tone burst, in letters (about 1.7 s at speed 1). */
export const MAX_BURST_LETTERS = 24;

export type Segment =
  | { kind: 'burst'; start: number; frames: number; unit: Unit; seed: number; part: number }
  | { kind: 'tag'; start: number; frames: number; name: TagName; part: number };

/** A timeline entry in frames (converted to ms by the caller). */
export interface FrameSpan {
  text: string;
  charStart: number;
  charEnd: number;
  start: number;
  end: number;
  part: number;
}

export interface TextPlan {
  segments: Segment[];
  words: FrameSpan[];
  sentences: FrameSpan[];
  /** Frame just after the trailing pause. */
  end: number;
  /** Frame just after the last sound. */
  soundEnd: number;
}

/** FNV-1a of a string's UTF-16 units: a small deterministic seed. */
export function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function unitSeconds(u: Unit): number {
  return u.kind === 'latin' ? u.letters * LATIN_CHAR_S : CJK_SYLLABLE_S;
}

/**
 * Plans one text starting at frame `at`. `part` tags every segment and span (the dialogue turn,
 * which selects the voice). Speed divides every duration except pause markers.
 */
export function planText(text: string, opts: TextOptions & { speed?: number }, sampleRate: number, at: number, part: number): TextPlan {
  return runSteps(planTextSteps(text, opts, sampleRate, at, part));
}

/** `planText` in steps (see `Steps`): a 10,000-character text takes tens of milliseconds. */
export function* planTextSteps(text: string, opts: TextOptions & { speed?: number }, sampleRate: number, at: number, part: number): Steps<TextPlan> {
  const { u16At, tokens, trailing } = yield* tokenizeSteps(text, opts);
  // The text of code points [a, b): a slice of the text itself (no per-word array of characters).
  const textOf = (a: number, b: number) => text.slice(u16At[a], u16At[b]);
  const speed = opts.speed && opts.speed > 0 ? opts.speed : 1;
  const fr = (s: number) => Math.round((s / speed) * sampleRate);
  const segments: Segment[] = [];
  const words: FrameSpan[] = [];
  const timed: { token: Token; start: number; end: number; newSentence: boolean }[] = [];
  let carrySentence = false;
  let pos = at;
  let started = false;
  let pendingPause: number | null = null;
  let soundEnd = at;
  let steps = 0;
  for (const token of tokens) {
    if (++steps % STEP_CHARS === 0) yield;
    if (token.kind === 'pause') {
      pendingPause = (pendingPause ?? 0) + token.seconds;
      carrySentence ||= token.sentenceBefore;
      continue;
    }
    if (pendingPause !== null) pos += Math.round(pendingPause * sampleRate);
    else if (started) pos += fr(GAP_S[token.gapBefore]);
    pendingPause = null;
    started = true;
    const start = pos;
    if (token.kind === 'tag') {
      const frames = fr(TAG_S[token.name]);
      segments.push({ kind: 'tag', start: pos, frames, name: token.name, part });
      pos += frames;
    } else {
      const wordText = textOf(token.start, token.end);
      const seed = hashString(wordText.toLowerCase());
      token.units.forEach((u, k) => {
        if (k > 0) pos += fr(u.kind === 'latin' && token.units[k - 1]!.kind === 'latin' ? LATIN_CHAR_S : TIGHT_S);
        const frames = Math.max(1, fr(unitSeconds(u)));
        // A very long run of letters is voiced as syllable bursts of at most MAX_BURST_LETTERS
        // (same total length): one burst of minutes would be rendered in one go and stall the loop.
        const pieces = u.kind === 'latin' ? Math.ceil(u.letters / MAX_BURST_LETTERS) : 1;
        for (let q = 0, done = 0; q < pieces; q++) {
          const n = Math.floor(((q + 1) * frames) / pieces) - done;
          if (n > 0) segments.push({ kind: 'burst', start: pos + done, frames: n, unit: u, seed: (seed + k * 7919 + q * 104729) >>> 0, part });
          done += n;
        }
        pos += frames;
      });
      if (token.units.length === 0) pos += fr(LATIN_CHAR_S); // an unpronounceable word still takes a beat
      words.push({ text: wordText, charStart: token.start, charEnd: token.end, start, end: pos, part });
    }
    soundEnd = pos;
    timed.push({ token, start, end: pos, newSentence: token.sentenceBefore || carrySentence });
    carrySentence = false;
  }
  pos += pendingPause !== null ? Math.round(pendingPause * sampleRate) : fr(GAP_S[trailing]);

  // Sentences: split at sentence ends and newlines, then to at most 50 code points.
  const sentences: FrameSpan[] = [];
  let group: typeof timed = [];
  const flush = () => {
    if (!group.length) return;
    let chunk: typeof timed = [];
    const emit = () => {
      if (!chunk.length) return;
      const a = chunk[0]!;
      const b = chunk[chunk.length - 1]!;
      sentences.push({
        text: textOf(a.token.start, b.token.tailEnd),
        charStart: a.token.start,
        charEnd: b.token.tailEnd,
        start: a.start,
        end: b.end,
        part,
      });
      chunk = [];
    };
    for (const t of group) {
      if (chunk.length && t.token.tailEnd - chunk[0]!.token.start > MAX_SENTENCE) {
        // Prefer to cut after the last comma-class pause inside the chunk.
        const cut = chunk
          .map((c, k) => (k > 0 && (c.token.gapBefore === 'comma' || c.token.gapBefore === 'sentence') ? k : -1))
          .filter((k) => k > 0)
          .pop();
        if (cut) {
          const rest = chunk.slice(cut);
          chunk = chunk.slice(0, cut);
          emit();
          chunk = rest;
          if (t.token.tailEnd - chunk[0]!.token.start > MAX_SENTENCE) emit();
        } else emit();
      }
      chunk.push(t);
    }
    emit();
    group = [];
  };
  for (const t of timed) {
    if (++steps % STEP_CHARS === 0) yield;
    if (t.newSentence) flush();
    group.push(t);
  }
  flush();
  return { segments, words, sentences, end: pos, soundEnd };
}
