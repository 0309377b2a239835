/** Wire shapes of `/v1/files/*` on the speech service (speech-beyond.md section 3, rule E18). */
import * as z from 'zod';
import { idValue } from '../reply.js';
import { describeValue } from '../../../core/http/describe.js';

/** A 64-bit id sent as a JSON integer or a string of digits (clients send both). */
export const idField = z.unknown().transform((v, ctx) => {
  const n = idValue(v);
  if (n === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: v === undefined || v === null || v === '' ? 'is required' : `must be a positive integer id (got ${describeValue(v)})`,
    });
    return z.NEVER;
  }
  return n;
});

const MAX_INT64 = 2n ** 63n - 1n;

/**
 * A file id of the file operations: a JSON integer or a decimal string in 1 … 2^63−1, the range the
 * official CLI checks before it sends the id as a string. Values beyond 2^53 are kept as bigint: they are
 * well-formed, but no file has them. A JSON number beyond 2^53 has lost its last digits when parsed;
 * it is taken as in range up to 2^63, the number 2^63−1 parses to.
 */
export const fileIdField = z.unknown().transform((v, ctx): number | bigint => {
  const small = idValue(v);
  if (small !== undefined) return small;
  if (typeof v === 'string' && /^\d{1,19}$/.test(v.trim())) {
    const n = BigInt(v.trim());
    if (n >= 1n && n <= MAX_INT64) return n;
  }
  if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 2 ** 63) return BigInt(v) > MAX_INT64 ? MAX_INT64 : BigInt(v);
  ctx.addIssue({
    code: 'custom',
    message: v === undefined || v === null || v === '' ? 'is required' : `must be a positive integer id (got ${describeValue(v)})`,
  });
  return z.NEVER;
});

const purpose = z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') });

/** `purpose` is optional on list (the real service answers without it). */
export const listQuery = z.looseObject({ purpose: purpose.optional() });
export const fileIdQuery = z.looseObject({ file_id: fileIdField });
/** `purpose` is optional on delete; when given it must be the file's own. */
export const deleteBody = z.looseObject({ file_id: fileIdField, purpose: purpose.optional() });
