/**
 * What a file says, as timed segments (rule E2): the emulator's own audio from its signature record
 * (the text spoken, true sentence and word times, one speaker per voice), foreign audio from the
 * recognition fixture by the SHA-256 of the file bytes, else nothing. Then the two levels:
 * `sentence` (fragments of one speaker merged up to a sentence end) and `word` (one segment per
 * Latin-script word or Chinese character, without punctuation).
 */
import { TAG_NAMES } from '../../../audio/index.js';
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord, SpokenSegment } from '../../../core/state/signatures.js';

/** One timed piece of a transcript, in ms. */
export interface Piece {
  startMs: number;
  endMs: number;
  speaker: string;
  text: string;
}

export interface Transcript {
  /** Sentence-level pieces. */
  sentences: Piece[];
  /** Word-level pieces. */
  words: Piece[];
  source: 'signature' | 'fixture' | 'none';
}

export const EMPTY: Transcript = { sentences: [], words: [], source: 'none' };

/** A record's segment counts as heard when the audio reaches its end within this tolerance. */
const END_TOLERANCE_MS = 300;

const TAGS = new RegExp(`[(\\[](?:${TAG_NAMES.map((t) => t.replace(/ /g, '\\s+')).join('|')})[)\\]]`, 'giu');

type Pronunciations = SignatureRecord['pronunciations'];

/**
 * What was said of a span of synthesis text: pause markers and interjection tags left out, plain-text
 * pronunciation replacements as spoken (tone annotations such as `(chu3)(li3)` keep the written text).
 */
export function spokenOf(text: string, pronunciations: Pronunciations = []): string {
  const found: { start: number; end: number; replacement: string }[] = [];
  for (const p of pronunciations) {
    if (!p.text || /[()]/.test(p.replacement)) continue;
    for (let at = text.indexOf(p.text); at >= 0; at = text.indexOf(p.text, at + p.text.length))
      found.push({ start: at, end: at + p.text.length, replacement: p.replacement });
  }
  // As the synthesis reads them: left to right, the longer first where two start together, no overlaps.
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const f of found) {
    if (f.start < at) continue;
    out += text.slice(at, f.start) + f.replacement;
    at = f.end;
  }
  out += text.slice(at);
  return out
    .replace(/<#[^#]*#>/g, ' ')
    .replace(TAGS, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const HAN = /\p{Script=Han}/u;
const SENTENCE_END = /[.!?。！？…]["'”’)\]」』）]*$/u;
/** A character that needs no space next to it (CJK scripts and their punctuation). */
const CLOSE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

/** The separator between two consecutive pieces of text: a space between Latin-script pieces, else none. */
export function separator(before: string, after: string): string {
  if (!before || !after) return '';
  return CLOSE_SCRIPT.test(before.at(-1)!) || CLOSE_SCRIPT.test(after[0]!) ? '' : ' ';
}

/** The whole text of sentence pieces, joined with their separators. */
export function joinText(pieces: readonly Piece[]): string {
  let out = '';
  for (const p of pieces) out += separator(out, p.text) + p.text;
  return out;
}

/** Speakers `S1`, `S2`, … in order of first appearance. */
function speakerNames(): (n: number | undefined) => string {
  const names = new Map<number, string>();
  return (n) => {
    const key = n ?? 1;
    let name = names.get(key);
    if (!name) names.set(key, (name = `S${names.size + 1}`));
    return name;
  };
}

/** Merges fragments of one speaker up to a sentence end; never across a speaker change. */
function mergeSentences(fragments: Piece[]): Piece[] {
  const out: Piece[] = [];
  let open: Piece | null = null;
  for (const f of fragments) {
    if (open && open.speaker === f.speaker && !SENTENCE_END.test(open.text)) {
      open.text += separator(open.text, f.text) + f.text;
      open.endMs = f.endMs;
    } else out.push((open = { ...f }));
  }
  return out;
}

/** Splits text into words (Latin-script words, single Chinese characters), punctuation left out. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  for (const token of text.split(/\s+/)) {
    let latin = '';
    for (const ch of token) {
      if (HAN.test(ch)) {
        if (latin) out.push(latin);
        latin = '';
        out.push(ch);
      } else if (/[\p{L}\p{N}\p{M}'’-]/u.test(ch)) latin += ch;
      else if (latin) {
        out.push(latin);
        latin = '';
      }
    }
    if (latin) out.push(latin);
  }
  return out.map((w) => w.replace(/^['’-]+|['’-]+$/g, '')).filter(Boolean);
}

/** Word pieces spread over a piece's time by their length (when no true word times are known). */
function spreadWords(piece: Piece): Piece[] {
  const words = wordsOf(piece.text);
  const total = words.reduce((n, w) => n + [...w].length, 0);
  let at = piece.startMs;
  return words.map((w) => {
    const span = total ? ((piece.endMs - piece.startMs) * [...w].length) / total : 0;
    const p = { startMs: at, endMs: at + span, speaker: piece.speaker, text: w };
    at += span;
    return p;
  });
}

/** Sentences of a text: each up to its final mark (and the closing quotes after it), the tail as one. */
function sentencesOf(text: string): string[] {
  return (text.match(/[^.!?。！？…]+(?:[.!?。！？…]+["'”’)\]」』）]*|$)/gu) ?? [text]).map((t) => t.trim()).filter(Boolean);
}

/**
 * A fragment holding several sentences (a dialogue turn) cut at its sentence ends, each part timed by
 * its own words; left whole when its words do not line up with the text.
 */
function splitAtSentences(piece: Piece, words: readonly Piece[]): Piece[] {
  const parts = sentencesOf(piece.text);
  if (parts.length < 2) return [piece];
  const inside = words.filter((w) => w.startMs >= piece.startMs - 1 && w.endMs <= piece.endMs + 1);
  const counts = parts.map((p) => wordsOf(p).length);
  if (counts.some((n) => n === 0) || counts.reduce((a, b) => a + b, 0) !== inside.length) return [piece];
  let at = 0;
  return parts.map((text, i) => {
    const own = inside.slice(at, (at += counts[i]!));
    return { startMs: own[0]!.startMs, endMs: own.at(-1)!.endMs, speaker: piece.speaker, text };
  });
}

/**
 * The transcript of the emulator's own audio: the record's segments heard within `heardMs` of audio,
 * shifted by `offsetMs` (where the emulator's audio starts in the file).
 */
export function recordTranscript(record: SignatureRecord, heardMs: number, offsetMs: number): Transcript {
  const name = speakerNames();
  const heard = (s: SpokenSegment) => s.endMs <= heardMs + END_TOLERANCE_MS;
  const shift = (s: SpokenSegment, text: string): Piece => ({ startMs: s.startMs + offsetMs, endMs: s.endMs + offsetMs, speaker: name(s.speaker), text });
  const fragments = record.segments
    .filter(heard)
    .map((s) => shift(s, spokenOf(s.text, record.pronunciations)))
    .filter((p) => p.text);
  let words: Piece[];
  if (record.words?.length) {
    words = record.words.filter(heard).flatMap((w) => {
      // A span of several words (Chinese characters read as one burst) shares its time evenly.
      const inner = wordsOf(spokenOf(w.text, record.pronunciations)).join(' ');
      return inner ? spreadWords(shift(w, inner)) : [];
    });
  } else words = fragments.flatMap(spreadWords);
  const sentences = mergeSentences(fragments.flatMap((f) => splitAtSentences(f, words)));
  return { sentences, words, source: 'signature' };
}

/** The recognition fixture's answer for the file's SHA-256 (with the language hint's variant), or null. */
export function fixtureTranscript(emu: Emulator, sha256: string, durationMs: number, language: string | undefined): Transcript | null {
  const rule = emu.fixtures.data['recognition.json'].rules.find((r) => r.sha256 === sha256);
  if (!rule) return null;
  const variant = (language && rule.languages?.[language]) || rule;
  const given = variant.segments ?? (variant.text ? [{ start: 0, end: durationMs / 1000, speaker: 'S1', text: variant.text }] : []);
  const sentences = given.map((s) => ({ startMs: s.start * 1000, endMs: s.end * 1000, speaker: s.speaker, text: s.text.trim() })).filter((p) => p.text);
  return { sentences, words: sentences.flatMap(spreadWords), source: 'fixture' };
}
