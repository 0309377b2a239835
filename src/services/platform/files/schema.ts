import * as z from 'zod';

/**
 * Query of `POST /v1/files/upload` (the body is multipart: `scene` and `file`, read by the route).
 * `with_url` is true for `true` or `1` (any case); anything else, or a repeated parameter, is false.
 */
export const uploadQuery = z.object({
  with_url: z
    .preprocess((value) => ['true', '1'].includes(String(value ?? '').toLowerCase()), z.boolean())
    .describe('true or 1: add a signed download url (valid 24 hours) to data.'),
});
