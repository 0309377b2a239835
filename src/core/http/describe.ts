/**
 * A short picture of any value for an error message (`got [[[…]]]`). Request bodies can nest
 * thousands of levels: this looks at most a few levels deep and a few characters long, so quoting a
 * bad value never walks it whole (JSON.stringify would, and overflows the stack).
 */
export function describeValue(value: unknown, max = 80): string {
  const out = { s: '' };
  write(value, 0, out, max);
  return out.s.length > max ? `${out.s.slice(0, max)}…` : out.s;
}

const MAX_DEPTH = 3;

function write(v: unknown, depth: number, out: { s: string }, max: number): void {
  if (out.s.length > max) return;
  if (v === null) out.s += 'null';
  else if (typeof v === 'string') out.s += JSON.stringify(v.length > max ? `${v.slice(0, max)}…` : v);
  else if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') out.s += String(v);
  else if (v === undefined) out.s += 'undefined';
  else if (typeof v !== 'object') out.s += `a ${typeof v}`;
  else if (Array.isArray(v)) {
    if (depth >= MAX_DEPTH) return void (out.s += v.length ? '[…]' : '[]');
    out.s += '[';
    for (let i = 0; i < v.length && out.s.length <= max; i++) {
      if (i) out.s += ',';
      write(v[i], depth + 1, out, max);
    }
    out.s += ']';
  } else {
    if (depth >= MAX_DEPTH) return void (out.s += '{…}');
    out.s += '{';
    let first = true;
    for (const k in v) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      if (out.s.length > max) break;
      out.s += `${first ? '' : ','}${JSON.stringify(k.length > max ? `${k.slice(0, max)}…` : k)}:`;
      first = false;
      write((v as Record<string, unknown>)[k], depth + 1, out, max);
    }
    out.s += '}';
  }
}

/** A count with its noun, singular for one (`1 chunk`, `2 chunks`), for messages. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
