/**
 * The platform's wording of a validation problem: `field: rule`, the field dotted. Options say how a
 * caller names things the field does not: a `prefix` before the field (`meta.`), a name for the whole
 * value when no field is named (else the rule alone), unknown keys named after the field.
 */
import type { z } from 'zod';
import { dottedPath, parseFirst, readerValidator, type FieldProblem } from '../../core/http/validation.js';
import { PlatformError } from './envelope.js';

export interface IssueWording {
  prefix?: string;
  whole?: string;
  withKeys?: boolean;
  /** Text for an error without issues. */
  none?: string;
}

export function problemText(problem: FieldProblem | undefined, opts: IssueWording = {}): string {
  if (!problem) return opts.none ?? 'request body is invalid';
  const keys = opts.withKeys && problem.keys?.length ? [problem.keys.join(', ')] : [];
  const field = dottedPath([...problem.path, ...keys]);
  const where = field ? `${opts.prefix ?? ''}${field}` : opts.whole;
  return where ? `${where}: ${problem.rule}` : problem.rule;
}

/** A value read with a schema the one way (core's `parseFirst`): the typed value, or its first problem as `field: rule`. */
export function readWorded<S extends z.ZodType>(
  schema: S,
  value: unknown,
  opts: IssueWording = {},
): { success: true; data: z.output<S> } | { success: false; text: string } {
  const parsed = parseFirst(schema, value);
  return parsed.success ? parsed : { success: false, text: problemText(parsed.problem, opts) };
}

/**
 * A route validator for a schema whose messages are whole error texts (they name their field): the first
 * problem becomes the family's parameter error with that text, the parsed value the route's typed body.
 */
export function wholeTextValidator<S extends z.ZodType>(schema: S) {
  return readerValidator((data): z.output<S> => {
    const parsed = parseFirst(schema, data);
    if (parsed.success) return parsed.data;
    throw new PlatformError('param', parsed.problem?.rule ?? 'request body is invalid');
  });
}
