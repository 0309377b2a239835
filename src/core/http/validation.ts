import type * as z from 'zod';
import { config, util } from 'zod/v4/core';

/**
 * One reading of a zod issue: the field it names and the rule it broke, plus the facts a service's
 * wording may use (a missing value, the expected type, unknown keys). Each service words the reading
 * its own way (speech: `voice_setting.speed must be …`; platform: `field: rule`).
 */
export interface FieldProblem {
  /** Path segments of the field (object keys and array indexes); empty for the whole value. */
  path: (string | number)[];
  /** The schema's own message for the broken rule. */
  rule: string;
  code: z.core.$ZodIssue['code'];
  /** `invalid_type` of an absent value (the parse needs `reportInput`, or every type issue reads as absent). */
  missing: boolean;
  /** `invalid_type`: the type the schema expected. */
  expected?: string;
  /** `unrecognized_keys`: the keys that were not expected. */
  keys?: string[];
}

export function readIssue(issue: z.core.$ZodIssue): FieldProblem {
  const path = issue.path.map((p) => (typeof p === 'number' ? p : String(p)));
  const out: FieldProblem = { path, rule: issue.message, code: issue.code, missing: false };
  if (issue.code === 'invalid_type') {
    out.expected = issue.expected;
    out.missing = (issue as { input?: unknown }).input === undefined;
  }
  if (issue.code === 'unrecognized_keys') out.keys = issue.keys;
  return out;
}

/** The first problem of a failed parse, or undefined for an error without issues. */
export function firstProblemOf(error: z.ZodError): FieldProblem | undefined {
  const issue = error.issues[0];
  return issue ? readIssue(issue) : undefined;
}

/** A parse that stops at its first problem: the typed value, or the reading of the first issue. */
export type FirstProblemParse<T> = { success: true; data: T } | { success: false; problem: FieldProblem | undefined };

/**
 * How parseFirst runs a schema: `reportInput`, so an absent value reads as missing; `abortEarly`, so
 * zod stops at the first issue that ends a parse (an object no longer parses the fields after it). The
 * first issue is the same either way: issues are pushed in the order they are found, and zod only stops
 * once one is pushed.
 */
const FIRST_PROBLEM = { async: false, reportInput: true, abortEarly: true } as const;

/**
 * Parses `value` with `schema`, reading only the first issue of a failure. A failed `safeParse` builds a
 * ZodError with every issue finalized, and checks every field after the first bad one, several
 * microseconds on the path of every rejected request, while a refusal names one problem.
 */
export function parseFirst<S extends z.ZodType>(schema: S, value: unknown): FirstProblemParse<z.output<S>> {
  const ctx = FIRST_PROBLEM;
  const result = schema._zod.run({ value, issues: [] }, ctx);
  if (result instanceof Promise) throw new Error('parseFirst takes synchronous schemas only');
  if (!result.issues.length) return { success: true, data: result.value as z.output<S> };
  const issue = result.issues[0]!;
  return { success: false, problem: readIssue(util.finalizeIssue(issue, ctx, config())) };
}

/** `a.b.0` */
export function dottedPath(path: readonly (string | number)[]): string {
  return path.map(String).join('.');
}

/** `a.b[0].c` */
export function bracketPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${p}`;
  return out;
}

/**
 * A route's validator compiler from a reader that returns the typed body or throws the service's own
 * error (the service's error handler renders it): for bodies whose error texts a service words itself.
 */
export function readerValidator<T>(read: (data: unknown) => T) {
  return () =>
    (data: unknown): { value: T } | { error: Error } => {
      try {
        return { value: read(data) };
      } catch (err) {
        return { error: err as Error };
      }
    };
}
