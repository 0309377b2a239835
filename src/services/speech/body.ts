/**
 * The one way a speech operation reads what a client sent (an HTTP body or query, a socket's message):
 * the value must be a JSON object; a number written with a fraction or an exponent where the service
 * types an integer is refused as its decoder refuses it, before any field rule; then the operation's
 * zod schema, whose first problem is the 2013 naming the field and its rule (`voice_setting.speed must
 * be in [0.5, 2]`). Every failure is `invalid params, …` (code 2013): HTTP 200 with `base_resp`, or a
 * socket's `task_failed`.
 */
import type * as z from 'zod';
import { decimalLiteralsOf, type DecimalLiteral } from '../../core/http/number-literals.js';
import { parseFirst } from '../../core/http/validation.js';
import { invalidParams, SpeechError } from './errors.js';
import { integerFieldAt } from './integers.js';
import { firstProblem } from './schema.js';

export interface ReadOptions {
  /** What the value is, for the object check: `request body` (checked to be an object), `query`, `message`. */
  what?: 'request body' | 'query' | 'message';
  /** Schemas that check the same value's fields later (async synthesis: the T2A request's): their integer fields count too. */
  typedAlsoBy?: readonly z.ZodType[];
}

/** Reads a value with a zod schema; a failure is the SpeechError 2013 naming the first field and its rule. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, { what = 'request body', typedAlsoBy }: ReadOptions = {}): z.output<S> {
  if (what !== 'query' && (value === null || typeof value !== 'object' || Array.isArray(value))) throw invalidParams(`${what} must be a JSON object`);
  refuseDecimalIntegers(value, typedAlsoBy ? [schema, ...typedAlsoBy] : [schema]);
  const parsed = parseFirst(schema, value);
  if (!parsed.success) throw invalidParams(firstProblem(parsed.problem));
  return parsed.data;
}

/**
 * An integer field given a number with a fraction or an exponent (`"pitch": 0.0`): the real service's
 * decoder refuses it before any rule, naming where. Its text as TauriTavern's users met it (issue 179,
 * speech-02-hd): `invalid params,Mismatch type int64 with value number "at index 215: mismatched type
 * with value\n\n\t…"`, the number's offset, then the body around it with a caret under the number on
 * the next line (written out in full in SillyTavern's issue 4570).
 */
export function refuseDecimalIntegers(value: unknown, schemas: readonly z.ZodType[]): void {
  for (const literal of decimalLiteralsOf(value)) {
    if (schemas.some((s) => integerFieldAt(s, literal.path))) throw new SpeechError(2013, mismatch(literal));
  }
}

/** The decoder's words (no space after `invalid params,`, as observed): Go-quoted, the text around the number on one line, a caret under it on the next. */
function mismatch(literal: DecimalLiteral): string {
  const { text, at } = literal.window;
  const caret = `${'.'.repeat(at)}^${'.'.repeat(Math.max(0, text.length - at - 1))}`;
  return `invalid params,Mismatch type int64 with value number ${JSON.stringify(`at index ${literal.index}: mismatched type with value\n\n\t${text}\n\t${caret}\n`)}`;
}

/** A socket message read the same way, without throwing: its typed fields, or the SpeechError to answer with. */
export function readMessage<S extends z.ZodType>(
  schema: S,
  frame: unknown,
  typedAlsoBy?: readonly z.ZodType[],
): { data: z.output<S> } | { error: SpeechError } {
  try {
    return { data: parseWith(schema, frame, { what: 'message', typedAlsoBy }) };
  } catch (err) {
    if (err instanceof SpeechError) return { error: err };
    throw err;
  }
}
