/**
 * A socket's timeline as it is recorded: each frame either way with its time since the open, JSON messages parsed,
 * bytes kept in files of `files/` by content hash (the client's audio in one file, the server's in another, each
 * frame a slice of it; the hex audio inside the speech events decoded into a third), the close in either direction.
 * Files are written as the frames arrive (FileWriter) and named once the socket ends; the steps themselves are written
 * to a temporary file as they come (LineSpill), so a socket of any length holds a bounded number of them in memory.
 * The keys a client sends inside its messages are noted on the way (the tape's scan replaces them everywhere).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FileRef, TapeStep } from '../format.js';
import { credentialValues } from '../request.js';
import { LineSpill } from '../spill.js';
import type { FileWriter } from '../files.js';
import { fileRefsIn, type TapeStore } from '../store.js';
import type { SocketKind } from './kinds.js';

/** The writer a reference belongs to until its file is whole and named by its hash. */
type Pending = 'in' | 'out' | 'hex';
/** The name a reference carries in the spill until then. */
const pendingName = (file: Pending) => `pending:${file}`;

export class TimelineRecorder {
  private readonly startedAt = performance.now();
  private readonly writers = new Map<Pending, FileWriter>();
  /** Each step, one JSON line, as it came. */
  private readonly spill: LineSpill;
  /** Credential values seen inside any message (a key a client sent), for the tape's scan. */
  private readonly keys = new Set<string>();
  private hexExt = 'mp3';
  /** The socket ended: what comes after (the other side's echo of the close) is not the exchange's. */
  private ended = false;
  /** The files' names once the socket ended, by the writer their references name. */
  private names: Map<string, string> | null = null;

  constructor(
    private readonly store: TapeStore,
    private readonly kind: SocketKind,
  ) {
    this.spill = new LineSpill(join(store.dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}.timeline`));
  }

  /** Steps held in memory (not yet in the spill's file): bounded by LineSpill.HOLD_LINES. */
  get held(): number {
    return this.spill.held;
  }

  /** The keys a client sent inside its messages. */
  get sentKeys(): string[] {
    return [...this.keys];
  }

  private push(step: TapeStep): void {
    if ('event' in step) for (const key of credentialValues(step.event)) this.keys.add(key);
    this.spill.add(JSON.stringify(step));
  }

  private now(): number {
    return Math.round((performance.now() - this.startedAt) * 10) / 10;
  }

  /** The client's frame. */
  clientFrame(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    if (binary) return this.push({ dir: 'in', t_ms: this.now(), frame: this.slice('in', this.kind.binaryExt.in, data, 'raw') });
    const text = data.toString('utf8');
    const json = parseJson(text);
    if (json === undefined) return this.push({ dir: 'in', t_ms: this.now(), text });
    // The speech sockets' audio format is the task's: its file is named for it.
    const format = (json as { audio_setting?: { format?: unknown } } | null)?.audio_setting?.format;
    if (typeof format === 'string' && /^[a-z0-9]{1,8}$/.test(format)) this.hexExt = format;
    this.push({ dir: 'in', t_ms: this.now(), event: json });
  }

  /** The server's frame (its hex audio moved to a file). */
  serverFrame(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    if (binary) return this.push({ dir: 'out', t_ms: this.now(), frame: this.slice('out', this.kind.binaryExt.out, data, 'raw') });
    const text = data.toString('utf8');
    const json = parseJson(text);
    if (json === undefined) return this.push({ dir: 'out', t_ms: this.now(), text });
    for (const path of this.kind.hexAudio ?? []) this.moveHex(json, path.split('.'));
    this.push({ dir: 'out', t_ms: this.now(), event: json });
  }

  /** The end of the socket, by either side. */
  closed(dir: 'in' | 'out', code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.push({ dir, t_ms: this.now(), close: { code, reason } });
  }

  /** A hex string at `path` inside `value`, replaced by a reference to its decoded bytes. */
  private moveHex(value: unknown, path: string[]): void {
    let at = value as Record<string, unknown> | null;
    for (const key of path.slice(0, -1)) {
      if (!at || typeof at !== 'object') return;
      at = at[key] as Record<string, unknown> | null;
    }
    const last = path[path.length - 1]!;
    if (!at || typeof at !== 'object' || typeof at[last] !== 'string') return;
    const hex = at[last] as string;
    // Only whole hex moves: an odd or damaged string stays as it came (the tape keeps what was said).
    if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return;
    at[last] = this.slice('hex', this.hexExt, Buffer.from(hex, 'hex'), 'hex');
  }

  private slice(file: Pending, ext: string, bytes: Buffer, encoding: FileRef['encoding']): FileRef {
    let writer = this.writers.get(file);
    if (!writer) {
      writer = this.store.fileWriter(ext);
      this.writers.set(file, writer);
    }
    const at = writer.add(bytes);
    return { $file: pendingName(file), encoding, offset: at.offset, bytes: at.bytes };
  }

  /** Writes the files and the rest of the steps; `steps()` then reads them whole, in order. */
  async finish(): Promise<void> {
    const names = new Map<string, string>();
    for (const [file, writer] of this.writers) names.set(pendingName(file), await writer.finish());
    await this.spill.close();
    this.names = names;
  }

  /** The steps in order, read back from the spill, every reference named by its file's hash (after `finish()`). */
  async *steps(): AsyncGenerator<TapeStep> {
    const names = this.names;
    if (!names) throw new Error('the timeline is not finished');
    for await (const line of this.spill.read()) {
      const step = JSON.parse(line) as TapeStep;
      for (const ref of fileRefsIn(step)) ref.$file = names.get(ref.$file) ?? ref.$file;
      yield step;
    }
  }

  /** Removes the spill once the tape is written. */
  async done(): Promise<void> {
    await this.spill.remove();
  }

  /** Drops the files and the spill (the socket is not taped). */
  async abandon(): Promise<void> {
    for (const writer of this.writers.values()) await writer.abandon();
    await this.spill.remove();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
