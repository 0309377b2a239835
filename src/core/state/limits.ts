/**
 * Sliding rate windows on the emulator clock. A window remembers the hits it allowed (time and amount)
 * and forgets those older than its length, so it reopens exactly when the clock has moved far enough.
 */
export interface WindowResult {
  allowed: boolean;
  /** Milliseconds until the asked amount would fit (0 when allowed). */
  retryAfterMs: number;
}

interface Hit {
  t: number;
  n: number;
}

export class RateWindows {
  private windows = new Map<string, Hit[]>();

  constructor(private readonly now: () => number) {}

  /** Counts `amount` against `key` if the window of `windowMs` then holds at most `max`. */
  hit(key: string, windowMs: number, max: number, amount = 1): WindowResult {
    const result = this.check(key, windowMs, max, amount);
    if (!result.allowed) return result;
    const hits = this.windows.get(key);
    if (hits) hits.push({ t: this.now(), n: amount });
    else this.windows.set(key, [{ t: this.now(), n: amount }]);
    return result;
  }

  /** Whether `amount` more would fit, without counting it. */
  check(key: string, windowMs: number, max: number, amount = 1): WindowResult {
    const now = this.now();
    const hits = (this.windows.get(key) ?? []).filter((h) => h.t > now - windowMs && h.t <= now);
    // A window with nothing in it is not kept: a key used once does not stay for the life of the process.
    if (hits.length) this.windows.set(key, hits);
    else this.windows.delete(key);
    let used = hits.reduce((s, h) => s + h.n, 0);
    if (used + amount <= max) return { allowed: true, retryAfterMs: 0 };
    for (const h of hits) {
      used -= h.n;
      if (used + amount <= max) return { allowed: false, retryAfterMs: Math.max(1, h.t + windowMs - now) };
    }
    return { allowed: false, retryAfterMs: windowMs };
  }

  /** Windows held (keys with hits in them). */
  get size(): number {
    return this.windows.size;
  }

  /** Drops the windows of accounts the emulator forgot (keys `<account id>:…`), in one pass. */
  forgetAccounts(ids: ReadonlySet<string>): void {
    if (!ids.size) return;
    for (const k of this.windows.keys()) if (ids.has(k.slice(0, k.indexOf(':')))) this.windows.delete(k);
  }

  /** Clears every window, or those whose key starts with `prefix` (one account's). */
  reset(prefix?: string): void {
    if (prefix === undefined) this.windows.clear();
    else for (const k of [...this.windows.keys()]) if (k.startsWith(prefix)) this.windows.delete(k);
  }
}
