/**
 * JSON text messages of the platform's WebSockets: one object per frame, a `meta` message accepted flat
 * or wrapped, and the `{is_final: true}` that ends an utterance.
 */

/**
 * `{meta:{…}}` → the inner object, whatever else the wrapper carries (`type`, a timestamp…); a flat
 * object (no `meta` key) stays as it is. No flat meta has a field named `meta`, so this is unambiguous.
 */
export function unwrapMeta(msg: Record<string, unknown>): unknown {
  return msg.meta !== undefined ? msg.meta : msg;
}

/** `{is_final: true}` (wrapped under `meta` too, for clients that wrap every message). */
export function isFinalMessage(msg: Record<string, unknown>): boolean {
  if (msg.is_final === true) return true;
  const inner = msg.meta;
  return typeof inner === 'object' && inner !== null && (inner as Record<string, unknown>).is_final === true;
}

/** Parses a text frame as a JSON object, or says why it is not one. */
export function parseJsonObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'text message is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'text message must be a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}
