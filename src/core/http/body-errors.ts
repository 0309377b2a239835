/**
 * What went wrong while Fastify read a request body, before any route ran: one classification every
 * service shares, so each only words it in its own error shape.
 */
export type BodyError = { kind: 'too_large' } | { kind: 'media_type' } | { kind: 'empty' } | { kind: 'bad_json'; detail: string };

/** The body error behind a framework error, or null when the error is something else. */
export function classifyBodyError(err: Error & { statusCode?: number; code?: string }): BodyError | null {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { kind: 'too_large' };
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { kind: 'media_type' };
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return { kind: 'empty' };
  // Any other 400 from the framework is the JSON parser's.
  if (err.statusCode === 400) return { kind: 'bad_json', detail: err.message };
  return null;
}
