/**
 * A bounded record of what was requested and answered, newest first when read. Keys never appear:
 * accounts are shown by their redacted label and matched by their id (a hash of the key).
 */
export interface WsFrameSummary {
  dir: 'in' | 'out';
  type: 'text' | 'binary' | 'close';
  size: number;
  event?: string;
  at_ms: number;
}

export interface JournalEntry {
  id: string;
  at_ms: number;
  service: 'speech' | 'platform';
  method: string;
  path: string;
  status: number | null;
  account: string | null;
  duration_ms: number | null;
  request: { headers: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
  response: { summary?: unknown; content_type?: string };
  chunks?: number;
  ws_frames?: WsFrameSummary[];
  ws_frames_total?: number;
  note?: string;
  /** Internal: matched by the control plane's `account` filter, never serialized. */
  accountId?: string;
}

/**
 * Defines `key` on `target` as a value computed on first read (the journal is read rarely, written on
 * every request: summaries are built only when someone looks). Enumerable, so JSON shows it; a write
 * replaces it.
 */
export function lazyField<T extends object, K extends keyof T>(target: T, key: K, compute: () => T[K]): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = compute();
      Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
      return value;
    },
    set(value: T[K]) {
      Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
    },
  });
}

const FRAME_HEAD = 20;
const FRAME_TAIL = 20;

export class Journal {
  private entries: JournalEntry[] = [];
  private counter = 0;

  constructor(private readonly limit: number) {}

  start(entry: Omit<JournalEntry, 'id' | 'status' | 'duration_ms'>): JournalEntry {
    const full: JournalEntry = { id: `req_${String(++this.counter).padStart(6, '0')}`, status: null, duration_ms: null, ...entry };
    this.entries.push(full);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return full;
  }

  list(filter: { limit?: number; path?: string; accountId?: string } = {}): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (filter.path && e.path !== filter.path) continue;
      if (filter.accountId && e.accountId !== filter.accountId) continue;
      out.push(e);
      if (filter.limit && out.length >= filter.limit) break;
    }
    return out;
  }

  clear(accountId?: string): void {
    this.entries = accountId === undefined ? [] : this.entries.filter((e) => e.accountId !== accountId);
  }

  size(): number {
    return this.entries.length;
  }
}

/** Keeps the first and the last 20 frames of a WebSocket conversation, and the total count. */
export function recordFrame(entry: JournalEntry | null | undefined, frame: WsFrameSummary): void {
  if (!entry) return;
  const frames = (entry.ws_frames ??= []);
  entry.ws_frames_total = (entry.ws_frames_total ?? 0) + 1;
  if (frames.length >= FRAME_HEAD + FRAME_TAIL) frames.splice(FRAME_HEAD, 1);
  frames.push(frame);
}

const SECRET_FIELDS = new Set(['apikey', 'api_key', 'authorization', 'x-api-key', 'token', 'usertoken']);

/** A small, key-free picture of a body: long strings and arrays are cut, secrets redacted. */
export function summarize(value: unknown, redact: (s: string) => string, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return { bytes: value.length };
  if (typeof value === 'string') return value.length > 256 ? `${value.slice(0, 64)}…(${value.length} chars)` : value;
  if (typeof value !== 'object') return value;
  if (depth > 4) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, 20).map((v) => summarize(v, redact, depth + 1));
    if (value.length > 20) items.push(`…(${value.length} items)`);
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_FIELDS.has(k.toLowerCase()) && typeof v === 'string' ? redact(v) : summarize(v, redact, depth + 1);
  }
  return out;
}
