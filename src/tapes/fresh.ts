/**
 * Fresh values on replay. Trace ids are new on every answer; ids of things (a file, a task) get one fresh value per
 * recorded value for the whole run, of the same shape (digits stay digits, a `file-` prefix stays), and a later
 * request that names the fresh value is matched as if it named the recorded one. Values follow from the seed, so a
 * replay with the same seed and the same requests answers the same bytes.
 */
import { createHash } from 'node:crypto';
import { embeddedJson } from './body.js';

/** The emulator's own links for a tape's recorded ones (by the recorded URL), and when they expire (emulator clock). */
export interface ReplayLinks {
  byUrl: ReadonlyMap<string, string>;
  expiresAtMs: number;
}

/** Fields fresh on every answer, wherever they appear (JSON answers, SSE events). */
export const TRACE_FIELDS = new Set(['trace_id', 'request_id']);
/** Headers fresh on every answer. */
export const TRACE_HEADERS = new Set(['trace-id', 'x-request-id', 'request-id', 'minimax-request-id']);
/** Fields that name a thing made upstream: one fresh value per recorded value, mapped both ways. */
export const IDENTITY_FIELDS = ['file_id', 'task_id'];

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

/** A value of the same shape as `recorded`, drawn from `hex` (64 hex digits, repeated as needed). */
export function shaped(recorded: string | number, hex: string): string | number {
  const pool = hex.repeat(4);
  let at = 0;
  const nextDigit = () => String(parseInt(pool[at++]!, 16) % 10);
  if (typeof recorded === 'number') {
    const text = String(Math.abs(Math.trunc(recorded)));
    const digits = [String((parseInt(pool[at++]!, 16) % 9) + 1), ...Array.from({ length: text.length - 1 }, nextDigit)].join('');
    return Number(digits) * (recorded < 0 ? -1 : 1);
  }
  // A leading word and separator (`file-`, `task_`) stays: clients and people read it.
  const prefix = /^[A-Za-z]+[-_]/.exec(recorded)?.[0] ?? '';
  const body = recorded.slice(prefix.length);
  const hexOnly = /^[0-9a-f]+$/.test(body.replace(/[^0-9a-zA-Z]/g, ''));
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let out = '';
  for (const ch of body) {
    const n = parseInt(pool[at++]!, 16);
    if (/[0-9]/.test(ch)) out += String(n % 10);
    else if (hexOnly && /[a-f]/.test(ch)) out += '0123456789abcdef'[n]!;
    else if (/[a-z]/.test(ch)) out += letters[(n * 7 + at) % 26]!;
    else if (/[A-Z]/.test(ch)) out += letters[(n * 7 + at) % 26]!.toUpperCase();
    else out += ch;
  }
  return prefix + out;
}

export class FreshValues {
  /** Recorded identity (as JSON text) → its fresh value; fresh value (as text) → the recorded one. */
  private readonly forward = new Map<string, string | number>();
  private readonly back = new Map<string, string | number>();
  private traces = 0;

  constructor(private readonly seed: string) {}

  /** The fresh value of a recorded id (the same one every time in this run). */
  identity(recorded: string | number): string | number {
    const key = JSON.stringify(recorded);
    let fresh = this.forward.get(key);
    if (fresh === undefined) {
      fresh = shaped(recorded, digest(this.seed, 'id', key));
      // Two recorded ids never share a fresh one (nor is one the other's recorded value).
      for (let n = 1; this.back.has(String(fresh)) || this.forward.has(JSON.stringify(fresh)); n++)
        fresh = shaped(recorded, digest(this.seed, 'id', key, String(n)));
      this.forward.set(key, fresh);
      this.back.set(String(fresh), recorded);
    }
    return fresh;
  }

  /** A new trace id shaped as the recorded one. */
  trace(recorded: string): string {
    return String(shaped(recorded, digest(this.seed, 'trace', String(++this.traces))));
  }

  /** The recorded value a fresh one stands for, or undefined. */
  recordedOf(value: string | number): string | number | undefined {
    return this.back.get(String(value));
  }

  /** A request's value with every fresh id as the recorded one (JSON values, and the segments of a path). */
  mapBack(value: unknown): unknown {
    if (this.back.size === 0) return value;
    if (typeof value === 'string' || typeof value === 'number') {
      const recorded = this.back.get(String(value));
      if (recorded === undefined) return value;
      // A number named as text stays text (a path segment, a query value).
      return typeof value === 'string' ? String(recorded) : recorded;
    }
    if (Array.isArray(value)) return value.map((v) => this.mapBack(v));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.mapBack(v);
      return out;
    }
    return value;
  }

  /** A path with each segment that is a fresh id as its recorded one. */
  mapPath(path: string): string {
    if (this.back.size === 0) return path;
    return path
      .split('/')
      .map((seg) => {
        const recorded = this.back.get(decodeURIComponent(seg));
        return recorded === undefined ? seg : encodeURIComponent(String(recorded));
      })
      .join('/');
  }

  /**
   * A recorded answer's JSON made fresh: trace fields new, identity fields mapped, download links as the emulator's,
   * and beside a link replaced, its expiry (`…expires_at`, in the recorded unit) as the new link's.
   * `identities`: the identity field names of this operation.
   */
  refresh(value: unknown, identities: ReadonlySet<string>, links: ReplayLinks, field?: string): unknown {
    if (typeof value === 'string') {
      const link = links.byUrl.get(value);
      if (link !== undefined) return link;
      if (field !== undefined && TRACE_FIELDS.has(field) && value) return this.trace(value);
      if (field !== undefined && identities.has(field) && value) return this.identity(value);
      const inner = embeddedJson(value);
      return inner === undefined ? value : JSON.stringify(this.refresh(inner, identities, links));
    }
    if (typeof value === 'number') return field !== undefined && identities.has(field) && value > 0 ? this.identity(value) : value;
    if (Array.isArray(value)) return value.map((v) => this.refresh(v, identities, links, field));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      let linked = false;
      for (const [k, v] of Object.entries(value)) {
        out[k] = this.refresh(v, identities, links, k);
        if (typeof v === 'string' && links.byUrl.has(v)) linked = true;
      }
      if (linked)
        for (const [k, v] of Object.entries(out))
          // Unix seconds or milliseconds, as recorded (a time in seconds is under 10^11 until the year 5138).
          if (/expires_at$/.test(k) && typeof v === 'number') out[k] = v < 1e11 ? Math.floor(links.expiresAtMs / 1000) : links.expiresAtMs;
      return out;
    }
    return value;
  }
}
