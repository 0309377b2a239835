/**
 * Matching a live socket against its tapes, by meaning and as the client speaks. A tape's client side is read as a
 * list of items: each JSON message by its canonical form without the socket's ignored fields, each run of binary
 * frames as one piece of audio (its bytes, however the client cuts them into frames). Each server frame of the tape is
 * anchored to where the client was when it came (after which item, how many bytes into a piece of audio) and how long
 * after: on replay it leaves once the live client reaches the same point, that long after (divided by the speed).
 */
import type { Tape, TapeStep } from '../format.js';
import type { TapeStore } from '../store.js';
import type { SocketKind } from './kinds.js';
import { withoutCredentials } from '../request.js';

export type ClientItem = { kind: 'message'; key: string; value: unknown } | { kind: 'audio'; bytes: Buffer };

/** Where the client is: inside item `item` (-1 before any), `bytes` into it when it is audio. */
export interface Position {
  item: number;
  bytes: number;
}

export interface AnchoredStep {
  step: TapeStep;
  anchor: Position;
  /** Milliseconds after the anchor, as recorded. */
  afterMs: number;
}

/** A socket tape read for replay. */
export interface SocketScript {
  tape: Tape;
  items: ClientItem[];
  server: AnchoredStep[];
}

/** Reads a socket tape into its client items and anchored server steps (the client's audio read from its files). */
export async function scriptOf(store: TapeStore, kind: SocketKind, tape: Tape): Promise<SocketScript> {
  const items: ClientItem[] = [];
  const server: AnchoredStep[] = [];
  let at: Position = { item: -1, bytes: 0 };
  let atMs = 0;
  /** When each client item arrived (ms since the open). */
  const itemMs: number[] = [];
  let lastInBinary = false;
  for (const step of tape.answer.stream?.steps ?? []) {
    if (step.dir === 'out') {
      server.push({ step, anchor: { ...at }, afterMs: Math.max(0, step.t_ms - atMs) });
      continue;
    }
    if ('close' in step) break;
    if ('frame' in step) {
      const bytes = await store.bytesOf(step.frame);
      const last = items[items.length - 1];
      if (lastInBinary && last?.kind === 'audio') last.bytes = Buffer.concat([last.bytes, bytes]);
      else {
        items.push({ kind: 'audio', bytes: Buffer.from(bytes) });
        itemMs.push(step.t_ms);
      }
      lastInBinary = true;
      at = { item: items.length - 1, bytes: (items[items.length - 1] as { bytes: Buffer }).bytes.length };
    } else {
      const value = 'event' in step ? step.event : step.text;
      items.push({ kind: 'message', key: messageKey(kind, value), value });
      itemMs.push(step.t_ms);
      lastInBinary = false;
      at = { item: items.length - 1, bytes: 0 };
    }
    atMs = step.t_ms;
  }
  // An event that never waits for more than the client's first messages is anchored there (its delay counted from
  // that message), and so is every frame before it: the frames keep their order.
  let cap = Infinity;
  for (let i = server.length - 1; i >= 0; i--) {
    const s = server[i]!;
    const name = 'event' in s.step ? eventNameOf(s.step.event) : undefined;
    const earliest = name !== undefined ? kind.earliest?.[name] : undefined;
    if (earliest !== undefined) cap = Math.min(cap, earliest);
    if (s.anchor.item > cap) {
      s.afterMs = Math.max(0, s.step.t_ms - (cap === -1 ? 0 : (itemMs[cap] ?? 0)));
      s.anchor = { item: cap, bytes: cap >= 0 && items[cap]?.kind === 'audio' ? (items[cap] as { bytes: Buffer }).bytes.length : 0 };
    }
  }
  return { tape, items, server };
}

function eventNameOf(event: unknown): string | undefined {
  if (!event || typeof event !== 'object') return undefined;
  const e = event as Record<string, unknown>;
  return typeof e.event === 'string' ? e.event : typeof e.type === 'string' ? e.type : undefined;
}

/** A client message by meaning: its JSON in canonical key order without the socket's ignored fields, credentials as the marker (text as it is). */
export function messageKey(kind: SocketKind, value: unknown): string {
  if (typeof value === 'string') return `text:${value}`;
  // Credential fields are the marker on tape: a live message's key is compared as the marker too.
  return `json:${canonical(withoutCredentials(withoutPaths(value, kind.ignoreIn)))}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A copy of `value` without the fields at the dotted `paths` (`*` is any key). */
export function withoutPaths(value: unknown, paths: readonly string[]): unknown {
  if (!paths.length || !value || typeof value !== 'object') return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const path of paths) drop(copy, path.split('.'));
  return copy;
}

function drop(value: unknown, path: string[]): void {
  if (!value || typeof value !== 'object') return;
  const [head, ...rest] = path;
  const obj = value as Record<string, unknown>;
  const keys = head === '*' ? Object.keys(obj) : [head!];
  for (const key of keys) {
    if (!(key in obj)) continue;
    if (rest.length === 0) delete obj[key];
    else drop(obj[key], rest);
  }
}

/** The string values at the dotted paths of a value, by path (for the ids a client names itself). */
export function valuesAt(value: unknown, paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const path of paths) {
    let at: unknown = value;
    for (const key of path.split('.')) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
    if (typeof at === 'string') out.set(path, at);
  }
  return out;
}

/** Whether the live client, at `live`, has reached `anchor`. */
export function reached(anchor: Position, live: Position): boolean {
  return live.item > anchor.item || (live.item === anchor.item && live.bytes >= anchor.bytes);
}

/**
 * One candidate tape followed as the client speaks: each client frame either keeps it in the running or tells where
 * it parted (for the near misses a strict miss names).
 */
export class Candidate {
  /** Where the tape and the client parted, once they did. */
  parted: string | null = null;
  /** How many client items agreed before they parted (the nearest tapes agreed the longest). */
  agreed = 0;

  constructor(readonly script: SocketScript) {}

  /** A client message at item `index`: does the tape's item there say the same? */
  message(index: number, key: string, value: unknown): boolean {
    if (this.parted) return false;
    const item = this.script.items[index];
    if (!item) return this.part(`the tape's client sent ${index} message${index === 1 ? '' : 's'}; this one is more`);
    if (item.kind !== 'message') return this.part(`message ${index + 1}: the tape's client sent audio there`);
    if (item.key !== key) return this.part(`message ${index + 1} differs (${differingFields(item.value, value).join(', ') || 'its text'})`);
    this.agreed = index + 1;
    return true;
  }

  /** Audio at item `index`, `from` bytes in: do the tape's client's bytes there say the same? */
  audio(index: number, from: number, bytes: Buffer): boolean {
    if (this.parted) return false;
    const item = this.script.items[index];
    if (!item) return this.part(`the tape's client sent ${index} message${index === 1 ? '' : 's'}; this audio is more`);
    if (item.kind !== 'audio') return this.part(`message ${index + 1}: the tape's client sent a JSON message there, not audio`);
    if (from + bytes.length > item.bytes.length) return this.part(`message ${index + 1}: the audio is longer than the tape's (${item.bytes.length} bytes)`);
    if (!item.bytes.subarray(from, from + bytes.length).equals(bytes))
      return this.part(`message ${index + 1}: the audio differs from the tape's at byte ${from}`);
    this.agreed = index + 1;
    return true;
  }

  /** The client left audio item `index` after `bytes`: did the tape's audio end there too? */
  audioEnds(index: number, bytes: number): boolean {
    if (this.parted) return false;
    const item = this.script.items[index];
    if (item?.kind === 'audio' && item.bytes.length !== bytes)
      return this.part(`message ${index + 1}: the audio is ${bytes} bytes, the tape's ${item.bytes.length}`);
    return true;
  }

  private part(why: string): false {
    this.parted = why;
    return false;
  }
}

/** The top-level fields (then one level down) in which two client messages differ, by name. */
export function differingFields(recorded: unknown, live: unknown, prefix = ''): string[] {
  if (!recorded || !live || typeof recorded !== 'object' || typeof live !== 'object')
    return JSON.stringify(recorded) === JSON.stringify(live) ? [] : [prefix || 'the message'];
  const keys = new Set([...Object.keys(recorded), ...Object.keys(live)]);
  const out: string[] = [];
  for (const key of keys) {
    const a = (recorded as Record<string, unknown>)[key];
    const b = (live as Record<string, unknown>)[key];
    if (canonical(a) === canonical(b)) continue;
    const name = prefix ? `${prefix}.${key}` : key;
    if (!prefix && a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a)) out.push(...differingFields(a, b, name));
    else out.push(name);
  }
  return out;
}
