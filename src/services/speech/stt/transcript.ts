/**
 * What a file says, as timed segments (rule E2): the emulator's own audio from its signature record
 * (the text spoken, true sentence and word times, one speaker per voice), foreign audio from the
 * recognition fixture by the SHA-256 of the file bytes, else nothing. Then the two levels:
 * `sentence` (fragments of one speaker merged up to a sentence end) and `word` (one segment per
 * Latin-script word or Chinese character, without punctuation).
 */
import { TAG_NAMES } from '../../../audio/index.js';
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord, SpokenSegment } from '../../../core/signatures.js';

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

/** What was said of a span of synthesis text: pause markers and interjection tags left out. */
export function spokenOf(text: string): string {
  return text
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

/**
 * The transcript of the emulator's own audio: the record's segments heard within `heardMs` of audio,
 * shifted by `offsetMs` (where the emulator's audio starts in the file).
 */
export function recordTranscript(record: SignatureRecord, heardMs: number, offsetMs: number): Transcript {
  const name = speakerNames();
  const heard = (s: SpokenSegment) => s.endMs <= heardMs + END_TOLERANCE_MS;
  const shift = (s: SpokenSegment, speaker: string, text: string): Piece => ({ startMs: s.startMs + offsetMs, endMs: s.endMs + offsetMs, speaker, text });
  const fragments = record.segments
    .filter(heard)
    .map((s) => shift(s, name(s.speaker), spokenOf(s.text)))
    .filter((p) => p.text);
  const sentences = mergeSentences(fragments);
  let words: Piece[];
  if (record.words?.length && record.kind === 'speech') {
    const speaker = sentences[0]?.speaker ?? 'S1';
    words = record.words.filter(heard).flatMap((w) => {
      const inner = wordsOf(spokenOf(w.text));
      // A span of several words (Chinese characters read as one burst) shares its time evenly.
      return spreadWords({ ...shift(w, speaker, inner.join(' ')), text: inner.join(' ') });
    });
  } else words = fragments.flatMap(spreadWords);
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
