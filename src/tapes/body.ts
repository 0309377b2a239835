/**
 * Audio inside JSON (T2A's hex `audio`, a socket's base64 chunk) is stored as a file of its decoded bytes and
 * replaced in the tape by a reference; replay writes it back exactly as it was written. Only strings that decode
 * and re-encode to themselves are moved, so the round trip is exact.
 */
import { createHash } from 'node:crypto';
import type { FileRef } from './format.js';
import { isFileRef, isJsonText } from './format.js';
import { fileRefsIn } from './store.js';
import type { TapeStore } from './store.js';

/** Shorter strings stay in the JSON: a reference would be no smaller. */
const MIN_LENGTH = 256;
const HEX = /^[0-9a-f]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The extension of bytes by their first bytes (a person opening files/ sees what they hold). */
export function sniffExtension(bytes: Uint8Array): string {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12));
  if (b.subarray(0, 3).toString('latin1') === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)) return 'mp3';
  if (b.subarray(0, 4).toString('latin1') === 'RIFF') return 'wav';
  if (b.subarray(0, 4).toString('latin1') === 'fLaC') return 'flac';
  if (b.subarray(0, 4).toString('latin1') === 'OggS') return 'ogg';
  if (b.subarray(4, 8).toString('latin1') === 'ftyp') return 'm4a';
  return 'bin';
}

/** The bytes a string of JSON holds, when it is long hex or base64 that re-encodes to itself. */
function decodedOf(s: string): { bytes: Buffer; encoding: 'hex' | 'base64' } | null {
  if (s.length < MIN_LENGTH) return null;
  if (s.length % 2 === 0 && HEX.test(s)) return { bytes: Buffer.from(s, 'hex'), encoding: 'hex' };
  if (s.length % 4 === 0 && BASE64.test(s)) {
    const bytes = Buffer.from(s, 'base64');
    if (bytes.toString('base64') === s) return { bytes, encoding: 'base64' };
  }
  return null;
}

/**
 * The value a string of JSON holds when the string is itself JSON text, written as JSON.stringify writes it (an MCP
 * tool's result is JSON inside a text field): links and ids inside it are then seen and made fresh like any other, and
 * writing the value back gives the very same string. Anything else: undefined.
 */
export function embeddedJson(s: string): unknown {
  const first = s.charCodeAt(0);
  // `{` or `[` only: a bare number or word is no embedded document.
  if (first !== 0x7b && first !== 0x5b) return undefined;
  try {
    const value: unknown = JSON.parse(s);
    return JSON.stringify(value) === s ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Stores (recording) or only names (replaying: compared by content) bytes by their hash: the file's name. */
export type FilePut = (bytes: Uint8Array, ext: string) => Promise<string>;

/** Names bytes by their hash without storing them. */
export const hashOnly: FilePut = async (bytes, ext) => `${createHash('sha256').update(bytes).digest('hex')}.${ext}`;

/** A copy of a JSON value with its long hex and base64 strings stored as files and replaced by references. */
export async function externalize(value: unknown, put: FilePut): Promise<unknown> {
  if (typeof value === 'string') {
    const decoded = decodedOf(value);
    if (!decoded) return value.length < MIN_LENGTH ? value : jsonTextOf(value, put);
    const name = await put(decoded.bytes, sniffExtension(decoded.bytes));
    return { $file: name, encoding: decoded.encoding } satisfies FileRef;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => externalize(v, put)));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await externalize(v, put);
    return out;
  }
  return value;
}

/** JSON text holding audio as `{"$json": value}` with the audio as files; any other string as it is. */
async function jsonTextOf(text: string, put: FilePut): Promise<unknown> {
  const inner = embeddedJson(text);
  if (inner === undefined) return text;
  const value = await externalize(inner, put);
  return fileRefsIn(value).next().done ? text : { $json: value };
}

/** The JSON value as it was recorded: references written back as the hex or base64 they were, JSON text as its text. */
export async function internalize(value: unknown, store: TapeStore): Promise<unknown> {
  if (isJsonText(value)) return JSON.stringify(await internalize(value.$json, store));
  if (isFileRef(value)) {
    const bytes = await store.bytesOf(value);
    return value.encoding === 'raw' ? bytes.toString('latin1') : bytes.toString(value.encoding);
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => internalize(v, store)));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await internalize(v, store);
    return out;
  }
  return value;
}
