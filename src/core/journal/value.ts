/**
 * A small, key-free picture of a value as the journal shows it (bodies, queries, frame contents): long
 * strings and arrays cut, objects to their first fields, credentials redacted.
 */
const SECRET_FIELDS = new Set(['apikey', 'api_key', 'authorization', 'x-api-key', 'token', 'usertoken', 'access_token']);

/** Whether a body field or query parameter of this name carries a credential (the journal keeps it redacted). */
export function isSecretField(name: string): boolean {
  return SECRET_FIELDS.has(name.toLowerCase());
}

/**
 * A small, key-free picture of a body: long strings and arrays are cut, secrets redacted. Every string
 * under a secret field is redacted, also when the field holds a list (`?api_key=a&api_key=b`) or an object.
 */
export function summarize(value: unknown, redact: (s: string) => string, depth = 0, secret = false): unknown {
  if (value === null || value === undefined) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return { bytes: value.length };
  if (typeof value === 'string') return secret ? redact(value) : detached(value.length > 256 ? `${value.slice(0, 64)}…(${value.length} chars)` : value);
  if (typeof value !== 'object') return value;
  if (depth > 4) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, 20).map((v) => summarize(v, redact, depth + 1, secret));
    if (value.length > 20) items.push(`…(${value.length} items)`);
    return items;
  }
  const out: Record<string, unknown> = {};
  const fields = Object.entries(value as Record<string, unknown>);
  for (const [k, v] of fields.slice(0, FIELDS_KEPT)) out[k] = summarize(v, redact, depth + 1, secret || isSecretField(k));
  // An object of many fields would hold as much as its body: its first fields and their count.
  if (fields.length > FIELDS_KEPT) out['…'] = `(${fields.length} fields)`;
  return out;
}

/**
 * A copy of a string that keeps no larger one alive. V8 holds a substring (a `slice`, a regex group, a
 * string value read by `JSON.parse`) as a view of the string it came from: a 32-character trace id
 * read from a 400 KB answer kept the whole answer for as long as the journal kept the entry (1,000
 * entries of MP3 answers: hundreds of MB). Short strings are always copied by V8.
 */
export function detached(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

/** Fields of one object a summary keeps (arrays keep 20 items). */
const FIELDS_KEPT = 50;
