/**
 * String schemas of the platform's JSON bodies, with messages that name the rule and what came
 * instead ("must be a string, got an array"). `null` counts as absent for optional fields.
 */
import * as z from 'zod';

export function received(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  // JSON numbers beyond the double range (1e400) parse as Infinity: a number, but not a usable one.
  if (typeof input === 'number' && !Number.isFinite(input)) return 'a number out of range';
  return typeof input === 'string' ? 'a string' : typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}

export const requiredString = (what = 'a string') =>
  z.string({ error: (iss) => (iss.input === undefined ? 'is required' : `must be ${what}, got ${received(iss.input)}`) });

export const optionalString = (what = 'a string') => z.string({ error: (iss) => `must be ${what}, got ${received(iss.input)}` }).nullish();
