/**
 * Text rules of the T2A operation: length, pause markers, LaTeX delimiters, pronunciation entries,
 * invisible characters and the two counts reported in `extra_info` (speech-current.md E20; docs/speech.md).
 * Every function returns a problem text (the part after `invalid params, `) or a value; no HTTP here.
 */

/** Text must be shorter than this many code points. */
export const MAX_TEXT_CHARS = 10_000;
/** Above this share of invisible characters the request fails with 1042. */
export const MAX_INVISIBLE_RATIO = 0.1;

/** Anything between `<#` and `#>` is read as a pause marker; its value is checked separately. */
const MARKER = /<#([^#<>]*)#>/gu;
const MARKER_VALUE = /^\d{1,2}(\.\d{1,2})?$/;
const PRONOUNCEABLE = /[\p{L}\p{N}]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const DIGIT = /\p{N}/u;
const LETTER = /[\p{L}\p{M}]/u;

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Checks every pause marker: value, place between pronounceable text, never two in a row. */
export function checkPauseMarkers(text: string): string | null {
  const markers = [...text.matchAll(MARKER)];
  if (!markers.length) return null;
  let prevEnd = 0;
  let prevRaw: string | null = null;
  for (const marker of markers) {
    const raw = marker[1] ?? '';
    const seconds = Number(raw);
    if (!MARKER_VALUE.test(raw) || seconds < 0.01 || seconds > 99.99)
      return `text pause marker <#${raw}#> must hold seconds in [0.01, 99.99] with at most two decimals`;
    const before = text.slice(prevEnd, marker.index);
    if (!PRONOUNCEABLE.test(before))
      return prevRaw === null
        ? `text pause marker <#${raw}#> must sit between two pronounceable pieces of text`
        : `text pause markers must not be used consecutively (<#${prevRaw}#> then <#${raw}#>)`;
    prevEnd = marker.index + marker[0].length;
    prevRaw = raw;
  }
  if (!PRONOUNCEABLE.test(text.slice(prevEnd))) return `text pause marker <#${prevRaw}#> must sit between two pronounceable pieces of text`;
  return null;
}

/** The text with its pause markers replaced by spaces (for counting). */
export function withoutMarkers(text: string): string {
  return text.replace(MARKER, ' ');
}

/** `latex_read`: formulas sit between `$$` pairs, so the delimiters must come in pairs. */
export function checkLatex(text: string): string | null {
  const n = text.split('$$').length - 1;
  return n % 2 === 1 ? `text has ${n} "$$" delimiters: with voice_setting.latex_read every formula must be wrapped in $$ at both ends` : null;
}

export interface Pronunciation {
  text: string;
  replacement: string;
}

/** A pronunciation annotation: `(<syllable><tone digit>)` groups, tones 1 to 4 and 5 for the neutral tone. */
const ANNOTATION = /^(\([\p{L}\p{M}]+[1-5]\))+$/u;

/**
 * `pronunciation_dict.tone` entries `<text>/<replacement>`: split at the first slash, both sides
 * non-empty; a replacement written with parentheses is an annotation and must have its shape.
 */
export function parsePronunciations(tone: readonly string[]): Pronunciation[] | string {
  const out: Pronunciation[] = [];
  for (const [i, entry] of tone.entries()) {
    const at = entry.indexOf('/');
    const text = at < 0 ? '' : entry.slice(0, at).trim();
    const replacement = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!text || !replacement) return `pronunciation_dict.tone[${i}] must have the shape <text>/<replacement>`;
    if (/[()]/.test(replacement) && !ANNOTATION.test(replacement))
      return `pronunciation_dict.tone[${i}] annotation must be (<syllable><tone digit 1-5>) groups, such as (chu3)(li3)`;
    out.push({ text, replacement });
  }
  return out;
}

/**
 * Share of invisible characters in the whole text, rounded to 4 decimals (0 for an empty text): the
 * ASCII control characters U+0000–U+001F and U+007F except tab and newline (so `\r` counts), over all
 * code points. Zero-width and other format characters (ZWJ, ZWSP, variation selectors) are not
 * invisible characters: emoji sequences never raise it.
 */
export function invisibleRatio(text: string): number {
  let total = 0;
  let invisible = 0;
  for (const c of text) {
    total++;
    const code = c.charCodeAt(0);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f) invisible++;
  }
  return total ? Math.round((invisible / total) * 10_000) / 10_000 : 0;
}

export interface TextCounts {
  /** Billed characters: every code point once, a CJK unified ideograph twice; pause markers removed. */
  usageCharacters: number;
  /** Pronounced words: each CJK character, each digit, each run of other letters (a Latin word). */
  wordCount: number;
}

/** What a character is for counting; ASCII is answered without a Unicode regex (most texts are mostly ASCII). */
function kindOf(c: string): 'cjk' | 'digit' | 'letter' | 'mark' | 'other' {
  const code = c.charCodeAt(0);
  if (c.length === 1 && code < 128) {
    if (code >= 48 && code <= 57) return 'digit';
    if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return 'letter';
    return 'other';
  }
  if (CJK.test(c)) return 'cjk';
  if (DIGIT.test(c)) return 'digit';
  if (LETTER.test(c)) return /\p{L}/u.test(c) ? 'letter' : 'mark';
  return 'other';
}

/**
 * A CJK unified ideograph of the basic block, Extension A or the compatibility block: the pricing
 * page's Chinese character, billed twice. Kana, Hangul and the rarer extensions count once.
 */
function isBilledTwice(code: number): boolean {
  return (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3400 && code <= 0x4dbf) || (code >= 0xf900 && code <= 0xfaff);
}

/**
 * `usage_characters` by the official pricing rule (E20): every code point of the text once its pause
 * markers are removed (letters, digits, punctuation, spaces, line breaks and interjection tags alike),
 * plus one more for each Chinese character. `今天是不是很开心呀(laughs)，当然了！` is 34.
 */
export function usageCharacters(text: string): number {
  let usage = 0;
  for (const c of text.replace(MARKER, '')) usage += isBilledTwice(c.codePointAt(0)!) ? 2 : 1;
  return usage;
}

/** Whether the text has anything to pronounce (a letter or a digit). */
export function hasPronounceable(text: string): boolean {
  return PRONOUNCEABLE.test(withoutMarkers(text));
}

export function countText(text: string): TextCounts {
  let words = 0;
  let inWord = false;
  const chars = [...withoutMarkers(text)];
  const kinds = chars.map(kindOf);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    const kind = kinds[i];
    if (kind === 'cjk' || kind === 'digit') {
      words++;
      inWord = false;
    } else if (kind === 'letter' || kind === 'mark') {
      if (!inWord) words++;
      inWord = true;
    } else if (inWord && (c === "'" || c === '’') && (kinds[i + 1] === 'letter' || kinds[i + 1] === 'mark')) {
      // an apostrophe inside a word (don't) keeps the word whole
    } else inWord = false;
  }
  return { usageCharacters: usageCharacters(text), wordCount: words };
}

/** Language of the text for the signature record: the boost when it names one, else Han vs the rest. */
const BOOST_CODES: Record<string, string> = {
  Chinese: 'zh',
  'Chinese,Yue': 'yue',
  English: 'en',
  Arabic: 'ar',
  Russian: 'ru',
  Spanish: 'es',
  French: 'fr',
  Portuguese: 'pt',
  German: 'de',
  Turkish: 'tr',
  Dutch: 'nl',
  Ukrainian: 'uk',
  Vietnamese: 'vi',
  Indonesian: 'id',
  Japanese: 'ja',
  Italian: 'it',
  Korean: 'ko',
  Thai: 'th',
  Polish: 'pl',
  Romanian: 'ro',
  Greek: 'el',
  Czech: 'cs',
  Finnish: 'fi',
  Hindi: 'hi',
  Bulgarian: 'bg',
  Danish: 'da',
  Hebrew: 'he',
  Malay: 'ms',
  Persian: 'fa',
  Slovak: 'sk',
  Swedish: 'sv',
  Croatian: 'hr',
  Filipino: 'fil',
  Hungarian: 'hu',
  Norwegian: 'no',
  Slovenian: 'sl',
  Catalan: 'ca',
  Nynorsk: 'nn',
  Tamil: 'ta',
  Afrikaans: 'af',
};

const HAN_G = /\p{Script=Han}/gu;
const NON_HAN_LETTER_G = /(?!\p{Script=Han})\p{L}/gu;

export function languageOf(text: string, boost: string | null | undefined): string {
  const boosted = boost ? BOOST_CODES[boost] : undefined;
  if (boosted) return boosted;
  // Counted by two global scans: a per-character test is ~10x slower on a 10,000-character text.
  const han = text.match(HAN_G)?.length ?? 0;
  const other = text.match(NON_HAN_LETTER_G)?.length ?? 0;
  return han > other ? 'zh' : 'en';
}
