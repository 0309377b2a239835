/**
 * The speech service's integer fields, typed as its decoder types them (int64): a JSON number written
 * with a fraction or an exponent (`"pitch": 0.0`, `1e2`) is refused before any field rule, as the real
 * service refuses it, even when its value is a whole number. A schema marks such a field with
 * `int64(…)`; `integerFieldAt` finds whether a path of a body lands on one.
 */
import * as z from 'zod';

const INT64 = new WeakSet<z.ZodType>();

/** Marks a schema as an integer field of the wire (its value still checked by the schema itself). */
export function int64<T extends z.ZodType>(schema: T): T {
  INT64.add(schema);
  return schema;
}

/** Whether `path` of a value checked by `schema` is a marked integer field (through optional, nullable, objects, arrays). */
export function integerFieldAt(schema: z.ZodType, path: readonly (string | number)[]): boolean {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; ; i++) {
    s = unwrapped(s);
    if (!s) return false;
    if (i === path.length) return INT64.has(s);
    const step = path[i]!;
    if (s instanceof z.ZodObject && typeof step === 'string') s = Object.hasOwn(s.shape, step) ? (s.shape[step] as z.ZodType) : undefined;
    else if (s instanceof z.ZodArray && typeof step === 'number') s = s.element as z.ZodType;
    else return false;
  }
}

/** The schema under `optional`, `nullable` and `default` wrappers, stopping at a marked one. */
function unwrapped(s: z.ZodType | undefined): z.ZodType | undefined {
  while (s && !INT64.has(s) && (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)) s = s.unwrap() as z.ZodType;
  return s;
}
