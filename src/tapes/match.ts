/**
 * Matching a request to tapes by meaning, not bytes: the operation, the path, the query and the body, each with the
 * fields its operation declares volatile left out (core/service.ts `TapeOperation`), credentials never compared (a
 * tape holds the marker). A body is compared field by field (flattened to dotted paths), so a miss can name the
 * nearest tapes and the fields that differ, as `verify`'s near misses do.
 */
import type { TapeDeclarations, TapeOperation } from '../core/service.js';
import { isFileRef, type Tape, type TapeBody, type TapeRequest } from './format.js';

/** Query parameters that carry a credential or an account: never part of a match. */
const ACCOUNT_QUERY = new Set(['api_key', 'apikey', 'key', 'token', 'groupid', 'group_id']);

/** What a request is compared on: its operation and account scope first, then its fields. */
export interface MatchKey {
  service: 'speech' | 'platform';
  operation: string;
  /** The account of the key presented (null without one). */
  account: string | null;
  /** Dotted field (`path`, `query.x`, `body.voice_setting.speed`, `body.file.file`) → its value as JSON text. */
  fields: Map<string, string>;
}

/** The declaration of an operation, or the default (nothing volatile). */
export function declarationOf(declarations: TapeDeclarations, operation: string): TapeOperation {
  return declarations[operation] ?? {};
}

/** The match key of a recorded or arriving request. */
export function matchKey(
  service: 'speech' | 'platform',
  operation: string,
  account: string | null,
  request: Pick<TapeRequest, 'path' | 'query' | 'body'>,
  declaration: TapeOperation,
): MatchKey {
  const fields = new Map<string, string>();
  fields.set('path', JSON.stringify(request.path));
  const ignoreQuery = new Set((declaration.ignoreQuery ?? []).map((q) => q.toLowerCase()));
  for (const [name, value] of Object.entries(request.query)) {
    const lower = name.toLowerCase();
    if (ACCOUNT_QUERY.has(lower) || ignoreQuery.has(lower)) continue;
    fields.set(`query.${name}`, JSON.stringify(value));
  }
  // An echo field is the client's in each message of a batch (a JSON array body) too.
  const batch = 'json' in request.body && Array.isArray(request.body.json);
  const echo = (declaration.echo ?? []).flatMap((p) => (batch ? [p, `*.${p}`] : [p]));
  const ignored = [...(declaration.ignore ?? []), ...echo].map((p) => p.split('.'));
  flattenBody(request.body, ignored, fields);
  return { service, operation, account, fields };
}

function flattenBody(body: TapeBody, ignored: string[][], into: Map<string, string>): void {
  if ('json' in body) flatten(body.json, ['body'], ignored, into);
  else if ('text' in body) into.set('body', JSON.stringify(body.text));
  else if ('file' in body) into.set('body', JSON.stringify(body.file.$file));
  else if ('multipart' in body) {
    // Parts by name; a file part by its content (its hash) and its name as uploaded.
    const form: Record<string, unknown> = {};
    for (const part of body.multipart) form[part.name] = 'value' in part ? part.value : { filename: part.filename, content: part.file.$file };
    flatten(form, ['body'], ignored, into);
  }
}

/** Whether a field path (below `body`) is one the operation declares volatile: a pattern or a field inside one. */
function isIgnored(path: string[], ignored: string[][]): boolean {
  return ignored.some((pattern) => pattern.length <= path.length && pattern.every((seg, i) => seg === '*' || seg === path[i]));
}

function flatten(value: unknown, path: string[], ignored: string[][], into: Map<string, string>): void {
  if (path.length > 1 && isIgnored(path.slice(1), ignored)) return;
  if (isFileRef(value)) {
    // Audio inside JSON is compared by its content, however it was written.
    into.set(path.join('.'), JSON.stringify(value.$file));
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path.join('.'), '[]');
    value.forEach((v, i) => flatten(v, [...path, String(i)], ignored, into));
    return;
  }
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) into.set(path.join('.'), '{}');
    for (const k of keys) flatten((value as Record<string, unknown>)[k], [...path, k], ignored, into);
    return;
  }
  into.set(path.join('.'), JSON.stringify(value));
}

/** The fields where two keys differ (present in one only, or with different values), sorted. */
export function differingFields(a: MatchKey, b: MatchKey): string[] {
  const out = new Set<string>();
  for (const [k, v] of a.fields) if (b.fields.get(k) !== v) out.add(k);
  for (const k of b.fields.keys()) if (!a.fields.has(k)) out.add(k);
  return [...out].sort();
}

/** A tape may answer a request's account: it holds none (shared), or the same one. */
export function answersAccount(tape: Pick<Tape, 'account'>, account: string | null): boolean {
  return tape.account === null || tape.account === account;
}

/** A tape with its key, as the index keeps it. */
export interface KeyedTape {
  tape: Tape;
  key: MatchKey;
}

/** A tape that nearly matched: its id and the fields that differ. */
export interface NearMiss {
  id: string;
  differs: string[];
}

/** The outcome of a lookup: the matching tapes in recording order, or the nearest ones. */
export type Lookup = { hit: KeyedTape[] } | { hit: null; nearest: NearMiss[] };

/** How many near misses a miss names. */
const NEAREST = 3;

/**
 * The tapes of a store by operation, with their keys computed once at load with the current declarations (so a
 * rule changed after recording applies to old tapes too).
 */
export class TapeIndex {
  private readonly byOperation = new Map<string, KeyedTape[]>();

  constructor(tapes: Iterable<Tape>, declarationsOf: (service: 'speech' | 'platform') => TapeDeclarations) {
    for (const tape of tapes) {
      const declaration = declarationOf(declarationsOf(tape.service), tape.operation);
      const key = matchKey(tape.service, tape.operation, tape.account, tape.request, declaration);
      const list = this.byOperation.get(opKey(tape.service, tape.operation)) ?? [];
      list.push({ tape, key });
      this.byOperation.set(opKey(tape.service, tape.operation), list);
    }
    for (const list of this.byOperation.values()) list.sort((x, y) => x.tape.seq - y.tape.seq || x.tape.id.localeCompare(y.tape.id));
  }

  /** Adds a tape recorded while running (record-missing replays what it just recorded). */
  add(tape: Tape, key: MatchKey): void {
    const k = opKey(tape.service, tape.operation);
    const list = (this.byOperation.get(k) ?? []).filter((t) => t.tape.id !== tape.id);
    list.push({ tape, key });
    list.sort((x, y) => x.tape.seq - y.tape.seq);
    this.byOperation.set(k, list);
  }

  /** The tapes that match a request exactly (same fields, an account they answer), or the nearest of its operation. */
  lookup(key: MatchKey): Lookup {
    const candidates = (this.byOperation.get(opKey(key.service, key.operation)) ?? []).filter((t) => answersAccount(t.tape, key.account));
    const scored = candidates.map((t) => ({ t, differs: differingFields(key, t.key) }));
    const hit = scored.filter((s) => s.differs.length === 0).map((s) => s.t);
    if (hit.length) return { hit };
    const nearest = scored
      .sort((a, b) => a.differs.length - b.differs.length)
      .filter((s, i, all) => all.findIndex((o) => o.differs.join() === s.differs.join()) === i)
      .slice(0, NEAREST)
      .map((s) => ({ id: s.t.tape.id, differs: s.differs }));
    return { hit: null, nearest };
  }

  get size(): number {
    let n = 0;
    for (const list of this.byOperation.values()) n += list.length;
    return n;
  }
}

function opKey(service: string, operation: string): string {
  return `${service} ${operation}`;
}

/** A miss in words: `no tape matches POST /v1/t2a_v2; nearest: speech-…-1 (differs in body.text), …`. */
export function missMessage(operation: string, nearest: NearMiss[]): string {
  if (nearest.length === 0) return `no tape matches ${operation}: none was recorded for this operation`;
  const shown = nearest.map((n) => `${n.id} (differs in ${n.differs.slice(0, 4).join(', ')}${n.differs.length > 4 ? ', …' : ''})`);
  return `no tape matches ${operation}; nearest: ${shown.join('; ')}`;
}

/** A tape's id: the service, the operation as a slug, a hash of its key, and its place in the sequence. */
export function tapeIdOf(service: string, operation: string, key: MatchKey, seq: number, hash: (text: string) => string): string {
  const slug = operation
    .toLowerCase()
    .replace(/:[a-z_]+/g, 'x')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const fields = [...key.fields.entries()].sort(([a], [b]) => a.localeCompare(b));
  return `${service}-${slug}-${hash(JSON.stringify([key.account, fields])).slice(0, 10)}-${seq}`;
}
