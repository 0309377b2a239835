/**
 * `tapes check`: every taped request sent again, in the order it was recorded, to an emulator answering by its own
 * rules (no upstream, no tapes), and its answer compared with the recorded one (compare.ts). An id the recording
 * handed out and a later request named (an uploaded `file_id`) is sent as the id the emulator handed out instead.
 */
import WebSocket from 'ws';
import { CREDENTIAL_MARKER, isFileRef, isJsonText, type Tape, type TapeBody, type TapeStep } from '../format.js';
import { audioHintOf } from '../pace.js';
import { SseReader } from '../sse.js';
import type { TapeStore } from '../store.js';
import { compare, type Difference } from './compare.js';
import { codeOf, collapse, eventName, fieldsOf, refPaths, valueAt, wholeAudio, type Observed } from './observe.js';

/** Where the emulator being checked listens. */
export interface CheckTarget {
  speechUrl: string;
  platformUrl: string;
}

export interface TapeCheck {
  id: string;
  operation: string;
  differences: Difference[];
}

export interface CheckReport {
  tapes: number;
  differing: number;
  results: TapeCheck[];
}

/** The key the check presents where a tape holds the credential marker. */
export const CHECK_KEY = 'tapes-check-key';

/** The longest gap between two client frames of a socket the check waits (recorded pauses are shortened to it). */
const MAX_GAP_MS = 250;
/** How long a socket may stay quiet after the client's last frame before the check ends it. */
const QUIET_MS = 3000;

export async function checkTapes(store: TapeStore, target: CheckTarget): Promise<CheckReport> {
  const ids = new Map<string, string>();
  const tapes = [...store.tapes.values()].sort((a, b) => a.recorded_at.localeCompare(b.recorded_at) || a.id.localeCompare(b.id));
  const results: TapeCheck[] = [];
  for (const tape of tapes) {
    let differences: Difference[];
    try {
      differences = tape.answer.stream?.kind === 'socket' ? await checkSocket(store, tape, target, ids) : await checkHttp(store, tape, target, ids);
    } catch (err) {
      differences = [{ what: 'exchange', recorded: 'answered', emulator: `failed: ${(err as Error).message}` }];
    }
    results.push({ id: tape.id, operation: `${tape.service} ${tape.operation}`, differences });
  }
  return { tapes: results.length, differing: results.filter((r) => r.differences.length).length, results };
}

/** The summary line: `12 tapes checked: 10 the same, 2 differ`. */
export function summaryLine(report: CheckReport): string {
  return `${report.tapes} tape${report.tapes === 1 ? '' : 's'} checked: ${report.tapes - report.differing} the same, ${report.differing} differ`;
}

function baseOf(tape: Tape, target: CheckTarget): string {
  return tape.service === 'platform' ? target.platformUrl : target.speechUrl;
}

/** A recorded string as the check sends it: the credential marker as the check's key, a recorded id as the emulator's. */
function live(value: string, ids: Map<string, string>): string {
  return ids.get(value) ?? value.split(CREDENTIAL_MARKER).join(CHECK_KEY);
}

function urlOf(tape: Tape, base: string, ids: Map<string, string>, ws = false): string {
  const path = tape.request.path
    .split('/')
    .map((seg) => encodeURIComponent(live(decodeURIComponent(seg), ids)))
    .join('/');
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(tape.request.query)) for (const v of [value].flat()) query.append(name, live(v, ids));
  const qs = query.toString();
  return `${ws ? base.replace(/^http/, 'ws') : base}${path}${qs ? `?${qs}` : ''}`;
}

function headersOf(tape: Tape): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(tape.request.headers)) {
    // A tape holds the whole credential header as the marker: the speech service's key is a Bearer token.
    if (name === 'authorization' && value === CREDENTIAL_MARKER) out[name] = `Bearer ${CHECK_KEY}`;
    else out[name] = value.split(CREDENTIAL_MARKER).join(CHECK_KEY);
  }
  return out;
}

/** A recorded JSON value with its files written back (hex, base64) and the recorded ids as the emulator's. */
async function inline(store: TapeStore, value: unknown, ids: Map<string, string>): Promise<unknown> {
  if (isJsonText(value)) return JSON.stringify(await inline(store, value.$json, ids));
  if (isFileRef(value)) {
    const bytes = await store.bytesOf(value);
    return value.encoding === 'hex' ? bytes.toString('hex') : value.encoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8');
  }
  if (typeof value === 'string') return live(value, ids);
  if (Array.isArray(value)) return Promise.all(value.map((v) => inline(store, v, ids)));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await inline(store, v, ids);
    return out;
  }
  return value;
}

async function requestBody(store: TapeStore, body: TapeBody, ids: Map<string, string>): Promise<string | Uint8Array | FormData | undefined> {
  if ('none' in body) return undefined;
  if ('json' in body) return JSON.stringify(await inline(store, body.json, ids));
  if ('text' in body) return body.text;
  if ('file' in body) return new Uint8Array(await store.bytesOf(body.file));
  const form = new FormData();
  for (const part of body.multipart) {
    if ('value' in part) form.append(part.name, live(part.value, ids));
    else form.append(part.name, new Blob([new Uint8Array(await store.bytesOf(part.file))], { type: part.content_type }), part.filename);
  }
  return form;
}

async function checkHttp(store: TapeStore, tape: Tape, target: CheckTarget, ids: Map<string, string>): Promise<Difference[]> {
  const headers = headersOf(tape);
  const body = await requestBody(store, tape.request.body, ids);
  // A form sets its own content type (with its boundary).
  if (body instanceof FormData) delete headers['content-type'];
  const res = await fetch(urlOf(tape, baseOf(tape, target), ids), { method: tape.request.method, headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const recorded = await observeRecorded(store, tape);
  const emulator: Observed = { status: res.status };
  const answer = tape.answer;
  if (answer.stream?.kind === 'sse') {
    const reader = new SseReader();
    const events = [...reader.push(bytes), ...reader.end()];
    // Where the recorded events held audio (one path per place, however many events had it there).
    const all = answer.stream.steps.flatMap((s) => ('event' in s ? refPaths(s.event) : []));
    const paths = all.filter((p, i) => all.findIndex((q) => q.path === p.path) === i);
    emulator.events = collapse(events.map((e) => eventName(e)));
    emulator.fields = new Map();
    const pieces: Buffer[] = [];
    for (const e of events) {
      fieldsOf(e, emulator.fields, eventName(e));
      pieces.push(...audioAt(e, paths));
      Object.assign(emulator, errorOf(emulator, e));
    }
    emulator.audio = wholeAudio(pieces);
  } else if (answer.stream?.kind === 'chunks' || (answer.body && 'file' in answer.body)) {
    emulator.audio = bytes.length ? bytes : undefined;
  } else if (answer.body && 'json' in answer.body) {
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      json = bytes.toString('utf8');
    }
    emulator.fields = fieldsOf(json);
    Object.assign(emulator, codeOf(json));
    const pieces = audioAt(json, refPaths(answer.body.json));
    emulator.audio = pieces.length ? Buffer.concat(pieces) : undefined;
    mapIds(await inline(store, answer.body.json, new Map()), json, ids);
  }
  return compare(recorded, emulator, audioHintOf(tape));
}

/** The first error event of a stream names its code. */
function errorOf(o: Observed, event: unknown): Partial<Observed> {
  if (o.code !== undefined) return {};
  const data = event && typeof event === 'object' ? ((event as { data?: unknown }).data ?? event) : event;
  const c = codeOf(data);
  return c.code !== undefined && c.code !== '0' ? c : {};
}

/** Audio held where the tape held files: decoded from hex or base64. */
function audioAt(value: unknown, paths: { path: string; encoding: string }[]): Buffer[] {
  const out: Buffer[] = [];
  for (const { path, encoding } of paths) {
    const v = valueAt(value, path);
    if (typeof v === 'string' && v) out.push(Buffer.from(v, encoding === 'base64' ? 'base64' : 'hex'));
  }
  return out;
}

/** Ids of the recorded answer (fields named `…id`) whose value the emulator's answer gives differently: later requests name them. */
function mapIds(recorded: unknown, emulator: unknown, ids: Map<string, string>, key = ''): void {
  if (typeof recorded === 'string' && typeof emulator === 'string') {
    if (/(^|_)id$/i.test(key) && recorded !== emulator) ids.set(recorded, emulator);
    return;
  }
  if (Array.isArray(recorded) && Array.isArray(emulator)) return recorded.forEach((r, i) => mapIds(r, emulator[i], ids, key));
  if (recorded && emulator && typeof recorded === 'object' && typeof emulator === 'object')
    for (const [k, v] of Object.entries(recorded)) mapIds(v, (emulator as Record<string, unknown>)[k], ids, k);
}

/** What the tape recorded, in the check's terms. */
export async function observeRecorded(store: TapeStore, tape: Tape): Promise<Observed> {
  const answer = tape.answer;
  const o: Observed = { status: answer.status };
  if (answer.stream?.kind === 'sse') {
    const events = answer.stream.steps.flatMap((s) => ('event' in s ? [s.event] : []));
    o.events = collapse(events.map((e) => eventName(e)));
    o.fields = new Map();
    const pieces: Buffer[] = [];
    for (const e of events) {
      fieldsOf(e, o.fields, eventName(e));
      for (const { path } of refPaths(e)) {
        const ref = valueAt(e, path);
        if (isFileRef(ref)) pieces.push(await store.bytesOf(ref));
      }
      Object.assign(o, errorOf(o, e));
    }
    o.audio = wholeAudio(pieces);
  } else if (answer.stream?.kind === 'chunks') {
    const frames = await Promise.all(answer.stream.steps.flatMap((s) => ('frame' in s ? [store.bytesOf(s.frame)] : [])));
    o.audio = frames.length ? Buffer.concat(frames) : undefined;
  } else if (answer.stream?.kind === 'socket') {
    return observeSocketSteps(store, answer.stream.steps);
  } else if (answer.body && 'file' in answer.body) {
    o.audio = await store.bytesOf(answer.body.file);
  } else if (answer.body && 'json' in answer.body) {
    o.fields = fieldsOf(answer.body.json);
    Object.assign(o, codeOf(answer.body.json));
    const refs = refPaths(answer.body.json);
    const pieces: Buffer[] = [];
    for (const { path } of refs) {
      const ref = valueAt(answer.body.json, path);
      if (isFileRef(ref)) pieces.push(await store.bytesOf(ref));
    }
    o.audio = pieces.length ? Buffer.concat(pieces) : undefined;
  }
  return o;
}

/** A socket's server side in the check's terms: its events, their fields, its first error, its audio, its close. */
async function observeSocketSteps(
  store: TapeStore | null,
  steps: { dir: string; event?: unknown; frame?: Buffer | import('../format.js').FileRef; close?: { code: number } }[],
): Promise<Observed> {
  const o: Observed = { status: 101, fields: new Map() };
  const names: string[] = [];
  const pieces: Buffer[] = [];
  for (const s of steps) {
    if (s.dir !== 'out') continue;
    if (s.close) {
      o.close = s.close.code;
      continue;
    }
    if (s.frame) {
      names.push('binary');
      pieces.push(Buffer.isBuffer(s.frame) ? s.frame : await store!.bytesOf(s.frame));
      continue;
    }
    if (s.event === undefined) continue;
    const name = eventName(s.event);
    names.push(name);
    fieldsOf(s.event, o.fields, name);
    const c = codeOf(s.event);
    if (o.code === undefined && c.code !== undefined && c.code !== '0') Object.assign(o, c);
    // The speech sockets' audio: every message before the one that closes the piece (which repeats it).
    const data = (s.event as { data?: { audio?: unknown }; is_final?: boolean }).data;
    const audio = data && typeof data === 'object' ? data.audio : undefined;
    if ((s.event as { is_final?: boolean }).is_final !== true) {
      if (isFileRef(audio)) pieces.push(await store!.bytesOf(audio));
      else if (typeof audio === 'string' && audio) pieces.push(Buffer.from(audio, 'hex'));
    }
  }
  o.events = collapse(names);
  o.audio = pieces.length ? Buffer.concat(pieces) : undefined;
  return o;
}

async function checkSocket(store: TapeStore, tape: Tape, target: CheckTarget, ids: Map<string, string>): Promise<Difference[]> {
  const steps = tape.answer.stream!.steps;
  const recorded = await observeSocketSteps(store, steps);
  const clientSteps = steps.filter((s) => s.dir === 'in');
  const clientCloses = clientSteps.some((s) => 'close' in s);
  const lastOut = [...steps].reverse().find((s) => s.dir === 'out' && !('close' in s));
  const lastName = lastOut ? ('frame' in lastOut ? 'binary' : 'event' in lastOut ? eventName(lastOut.event) : 'text') : undefined;
  const got = await talk(store, urlOf(tape, baseOf(tape, target), ids, true), headersOf(tape), clientSteps, clientCloses ? lastName : undefined);
  const emulator = await observeSocketSteps(null, got);
  return compare(recorded, emulator, audioHintOf(tape));
}

type Got = { dir: 'out'; event?: unknown; frame?: Buffer; close?: { code: number } };

/** Plays the client's side of a socket tape and collects the server's frames until it closes (or the client would have). */
function talk(store: TapeStore, url: string, headers: Record<string, string>, client: TapeStep[], closeAfter: string | undefined): Promise<Got[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const got: Got[] = [];
    let quiet: NodeJS.Timeout | undefined;
    const hush = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => ws.close(1000, 'check: quiet'), QUIET_MS);
    };
    ws.on('message', (data, binary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (binary) got.push({ dir: 'out', frame: bytes });
      else {
        let event: unknown = bytes.toString('utf8');
        try {
          event = JSON.parse(event as string);
        } catch {
          // kept as text
        }
        got.push({ dir: 'out', event });
        if (closeAfter && eventName(event) === closeAfter && ws.readyState === ws.OPEN) ws.close(1000, 'done');
      }
      hush();
    });
    ws.on('close', (code) => {
      clearTimeout(quiet);
      got.push({ dir: 'out', close: { code } });
      resolve(got);
    });
    ws.on('unexpected-response', (_req, res) => reject(new Error(`the upgrade was refused with HTTP ${res.statusCode}`)));
    ws.on('error', reject);
    ws.on('open', async () => {
      let at = client[0]?.t_ms ?? 0;
      for (const step of client) {
        if ('close' in step) break;
        const gap = Math.min(MAX_GAP_MS, Math.max(0, step.t_ms - at));
        at = step.t_ms;
        if (gap > 1) await new Promise((r) => setTimeout(r, gap));
        if (ws.readyState !== ws.OPEN) return;
        if ('frame' in step) ws.send(await store.bytesOf(step.frame), { binary: true });
        else if ('event' in step) ws.send(JSON.stringify(step.event));
        else if ('text' in step) ws.send(step.text);
      }
      hush();
    });
  });
}
