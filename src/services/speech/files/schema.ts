import * as z from 'zod';
import { idValue } from '../reply.js';

/** Wire shapes of `/v1/files/*` on the speech service (speech-beyond.md section 3). */

/** A 64-bit id sent as a JSON integer or a string of digits (clients send both). */
export const idField = z.unknown().transform((v, ctx) => {
  const n = idValue(v);
  if (n === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: v === undefined || v === null || v === '' ? 'is required' : `must be a positive integer id (got ${JSON.stringify(v)})`,
    });
    return z.NEVER;
  }
  return n;
});

const purpose = z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') });

export const listQuery = z.looseObject({ purpose });
export const fileIdQuery = z.looseObject({ file_id: idField });
export const deleteBody = z.looseObject({ file_id: idField, purpose });
