/**
 * The one way a route reads and checks what a request carries (its body, query, params or headers)
 * against the zod schema it declares: the typed value, or a `SchemaRefusal` naming the first problem as
 * a `FieldProblem` (core/http/validation.ts), never zod's own objects. It is every app's validator
 * compiler (src/app.ts); each family words the refusal in its own shape (its error handler's
 * `schemaError`: the platform's `field: rule`, the control plane's `body field x: rule`). A reader that
 * must check something before the schema (the speech service's int64 literals, services/speech/body.ts)
 * reads through `parseFirst` too, so every service and every socket message meets the same problems.
 */
import type * as z from 'zod';
import { ExpectedError } from './expected-error.js';
import { parseFirst, type FieldProblem } from './validation.js';

/** A route's schema refused what came: its first problem. Fastify adds the part it was read from (`validationContext`). */
export class SchemaRefusal extends ExpectedError {
  override readonly name = 'SchemaRefusal';
  statusCode = 400;
  code = 'FST_ERR_VALIDATION';
  /** `body`, `querystring`, `params` or `headers`: set by Fastify when it hands the refusal on. */
  validationContext?: string;

  constructor(readonly problem: FieldProblem | undefined) {
    super(problem ? `${problem.path.join('.')}${problem.path.length ? ' ' : ''}${problem.rule}` : 'the value is invalid');
  }
}

/** Fastify's validator compiler for a route's zod schema (one parse per request part, first problem only). */
export function schemaValidator({ schema }: { schema: z.ZodType }) {
  return (data: unknown): { value: unknown } | { error: SchemaRefusal } => {
    const parsed = parseFirst(schema, data);
    return parsed.success ? { value: parsed.data } : { error: new SchemaRefusal(parsed.problem) };
  };
}
