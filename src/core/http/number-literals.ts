/**
 * Numbers a JSON text wrote with a fraction or an exponent (`0.0`, `1e2`). `JSON.parse` reads `0.0` as
 * the integer 0, while a service typed like Go's decoders refuses it for an integer field: a service
 * that cares asks `decimalLiteralsOf(value)` for where they were. They are found by one scan of the
 * text the parser already read (never a second parse), and only when the text has a digit followed by
 * `.`, `e` or `E` at all; the answer is kept beside the parsed value (a WeakMap), so nothing is added to
 * the value itself.
 */

/** One number written with a fraction or an exponent. */
export interface DecimalLiteral {
  /** Where it is in the value: object keys and array indexes. */
  readonly path: readonly (string | number)[];
  /** Its offset in the text (UTF-16 code units, as the decoders that report it count ASCII bodies). */
  readonly index: number;
  /** The literal as written. */
  readonly source: string;
  /** Up to 16 characters of the text on each side of it, starting 16 before (`window.at` is where it starts). */
  readonly window: { readonly text: string; readonly at: number };
}

const FOUND = new WeakMap<object, readonly DecimalLiteral[]>();
const NONE: readonly DecimalLiteral[] = [];

/** Whether the text may hold such a number at all (a digit then `.`, `e` or `E`), before scanning it. */
const MAYBE = /[0-9][.eE]/;

/** Records the decimal literals of `text`, which parsed to `value` (an object or array; other values have no fields). */
export function noteDecimalLiterals(value: unknown, text: string): void {
  if (value === null || typeof value !== 'object' || !MAYBE.test(text)) return;
  const found = scan(text);
  if (found.length) FOUND.set(value, found);
}

/** The decimal literals of a parsed value's text, as `noteDecimalLiterals` found them (none when not noted). */
export function decimalLiteralsOf(value: unknown): readonly DecimalLiteral[] {
  return value !== null && typeof value === 'object' ? (FOUND.get(value) ?? NONE) : NONE;
}

/** `JSON.parse` with the decimal literals noted: for a message parsed outside the HTTP parser (a socket's). */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  noteDecimalLiterals(value, text);
  return value;
}

interface Frame {
  readonly array: boolean;
  /** The current key (object) or index (array). */
  key: string | number;
  /** An object frame waits for a key (true) or a value (false). */
  wantsKey: boolean;
}

const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

/** One pass over valid JSON: the path and place of every number written with a fraction or an exponent. */
function scan(text: string): DecimalLiteral[] {
  const out: DecimalLiteral[] = [];
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '{' || c === '[') {
      stack.push({ array: c === '[', key: 0, wantsKey: c === '{' });
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.array) top.key = (top.key as number) + 1;
      else if (top) top.wantsKey = true;
      i++;
    } else if (c === ':') {
      const top = stack[stack.length - 1];
      if (top) top.wantsKey = false;
      i++;
    } else if (c === '"') {
      STRING.lastIndex = i;
      const m = STRING.exec(text)!;
      const top = stack[stack.length - 1];
      if (top && !top.array && top.wantsKey) top.key = m[0].includes('\\') ? (JSON.parse(m[0]) as string) : m[0].slice(1, -1);
      i += m[0].length;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text)!;
      if (m[1] !== undefined || m[2] !== undefined) {
        const from = Math.max(0, i - 16);
        out.push({ path: stack.map((f) => f.key), index: i, source: m[0], window: { text: text.slice(from, i + 16), at: i - from } });
      }
      i += m[0].length;
    } else i++;
  }
  return out;
}
