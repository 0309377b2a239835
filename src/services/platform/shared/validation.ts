import type { z } from 'zod';

/**
 * The platform's reading of a zod issue: `field: rule` (the field as a dotted path), or the rule
 * alone for the body itself. Route validation errors reach the same words through `app.ts`.
 */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'request body is invalid';
  const field = issue.path.join('.');
  return field ? `${field}: ${issue.message}` : issue.message;
}
