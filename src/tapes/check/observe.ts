/**
 * What `tapes check` compares of an answer, read the same way from a tape and from the emulator's own answer: the
 * HTTP status, the spec code and message, the JSON fields present and their types, the sequence of stream or socket
 * events, the close of a socket, and the audio it carried (compared by what a decoder reads of it).
 */
import { embeddedJson } from '../body.js';
import { isFileRef, isJsonText } from '../format.js';

export interface Observed {
  status: number;
  /** The spec's code and message (speech `base_resp`, the platform envelope, a socket's error event). */
  code?: string;
  message?: string;
  /** JSON field path → its type (`data.audio: string`, `data.items[]: object`). */
  fields?: Map<string, string>;
  /** A stream's or socket's events by name, runs of the same name as one (`task_continued+`). */
  events?: string[];
  /** The socket's close code, when the server closed it. */
  close?: number;
  /** The audio the answer carried, whole. */
  audio?: Buffer;
}

/**
 * The JSON fields of a value by path and type; a file reference is the string it stood for, array items share `[]`,
 * and the fields of JSON held as text (an MCP tool's result) follow its path as `text(json).field`.
 */
export function fieldsOf(value: unknown, into = new Map<string, string>(), path = ''): Map<string, string> {
  if (isFileRef(value)) return into.set(path, 'string');
  if (isJsonText(value)) return fieldsOf(value.$json, into, `${path}(json)`).set(path, 'string');
  if (Array.isArray(value)) {
    into.set(path, 'array');
    for (const item of value) fieldsOf(item, into, `${path}[]`);
    return into;
  }
  if (value === null) return into.set(path, 'null');
  if (typeof value === 'object') {
    if (path) into.set(path, 'object');
    for (const [k, v] of Object.entries(value)) fieldsOf(v, into, path ? `${path}.${k}` : k);
    return into;
  }
  if (typeof value === 'string') {
    const inner = embeddedJson(value);
    if (inner !== undefined) fieldsOf(inner, into, `${path}(json)`);
  }
  return into.set(path, typeof value);
}

/** The spec code and message of a JSON answer or event, wherever its family puts them. */
export function codeOf(value: unknown): { code?: string; message?: string } {
  if (!value || typeof value !== 'object') return {};
  const v = value as Record<string, any>;
  if (v.base_resp && typeof v.base_resp === 'object') return { code: String(v.base_resp.status_code), message: String(v.base_resp.status_msg ?? '') };
  if ('error_code' in v) return { code: String(v.error_code), message: String(v.error_message ?? '') };
  if (v.error && typeof v.error === 'object' && 'code' in v.error) return { code: String(v.error.code), message: String(v.error.message ?? '') };
  if (v.type === 'error' && 'code' in v) return { code: String(v.code), message: String(v.message ?? '') };
  // A failed MCP tool call: its result's text is the mirrored operation's envelope.
  const text = v.result?.isError === true ? v.result.content?.[0]?.text : undefined;
  if (typeof text === 'string') return codeOf(embeddedJson(text));
  if (isJsonText(text)) return codeOf(text.$json);
  return {};
}

/** An event's name: its `event` or `type`, a T2A chunk by its `status`, or `data`. */
export function eventName(value: unknown): string {
  if (!value || typeof value !== 'object') return 'text';
  const v = value as Record<string, any>;
  if (typeof v.event === 'string') return v.event;
  if (typeof v.type === 'string') return v.type;
  const data = v.data && typeof v.data === 'object' ? v.data : null;
  if (data && typeof data.event === 'string') return data.event;
  if (data && typeof data.type === 'string') return data.type;
  const inner = data?.data && typeof data.data === 'object' ? data.data : data;
  if (inner && typeof inner.status === 'number') return `status ${inner.status}`;
  if (data?.base_resp && data.base_resp.status_code !== 0) return 'error';
  return 'data';
}

/** Runs of the same name as one: how many chunks a stream is cut into is the service's business. */
export function collapse(names: string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    const last = out[out.length - 1];
    if (last === name || last === `${name}+`) out[out.length - 1] = `${name}+`;
    else out.push(name);
  }
  return out.map((n) => n.replace(/\+$/, ''));
}

/** Paths (dotted) of the file references inside a value: where a tape held hex or base64 audio. */
export function refPaths(value: unknown, path = '', into: { path: string; encoding: string }[] = []): { path: string; encoding: string }[] {
  if (isFileRef(value)) {
    into.push({ path, encoding: value.encoding });
    return into;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) refPaths(v, path ? `${path}.${k}` : k, into);
  return into;
}

/** The value at a dotted path. */
export function valueAt(value: unknown, path: string): unknown {
  let at = value;
  for (const key of path.split('.')) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

/**
 * The audio of a stream's pieces: the last piece when it holds them all (T2A's final chunk carries the whole file),
 * else all of them in order.
 */
export function wholeAudio(pieces: Buffer[]): Buffer | undefined {
  if (!pieces.length) return undefined;
  const last = pieces[pieces.length - 1]!;
  const before = pieces.slice(0, -1);
  const sum = before.reduce((n, p) => n + p.length, 0);
  if (before.length && last.length >= sum * 0.9) return last;
  return Buffer.concat(pieces);
}
