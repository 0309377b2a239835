import fc from 'fast-check';
import { nameOf, problemOf, type Endpoint } from './endpoints.js';
import { caseOf, send, type Case, type InputKind } from './inputs.js';

/**
 * Input families kept out of one endpoint's generated inputs while a known defect stands; each entry
 * says which. Remove an entry once its fix is in: the property then covers that family again.
 */
export const KNOWN_DEFECTS: Record<string, InputKind[]> = {};

/** Answers one case and judges it: null when the answer keeps the endpoint's contract. */
export async function check(
  base: string,
  e: Endpoint,
  c: Case,
  timeoutMs: number,
  method = e.method,
): Promise<{ status: number | 'hang' | 'error'; problem: string | null }> {
  const a = await send(base, method, c, timeoutMs, e.stream);
  if ('hang' in a) return { status: 'hang', problem: `no answer within ${timeoutMs} ms` };
  if ('error' in a) return { status: 'error', problem: `connection failed: ${a.error}` };
  return { status: a.status, problem: problemOf(e, a, method) };
}

export function describeCase(c: Case): string {
  const body = c.body ? ` body(${c.kind}, ${c.body.length} B): ${c.body.toString('latin1').slice(0, 160)}` : '';
  return `${c.path} headers ${JSON.stringify(c.headers)}${body}`;
}

/** The property of one endpoint: every generated request gets an answer in its shape and listed statuses. */
export function endpointProperty(base: string, e: Endpoint, timeoutMs: number, after?: () => Promise<void>) {
  return fc.asyncProperty(caseOf(e, KNOWN_DEFECTS[nameOf(e)] ?? []), async (c) => {
    const r = await check(base, e, c, timeoutMs);
    if (after) await after();
    if (r.problem) throw new Error(`${nameOf(e)}: ${r.problem}\n  request: ${describeCase(c)}`);
  });
}
