/**
 * A socket's timeline as it is recorded: each frame either way with its time since the open, JSON messages parsed,
 * bytes kept in files of `files/` by content hash (the client's audio in one file, the server's in another, each
 * frame a slice of it; the hex audio inside the speech events decoded into a third), the close in either direction.
 * Files are written as the frames arrive (bounded memory, FileWriter) and named once the socket ends.
 */
import { performance } from 'node:perf_hooks';
import type { FileRef, TapeStep } from '../format.js';
import type { FileWriter, TapeStore } from '../store.js';
import type { SocketKind } from './kinds.js';

/** The name a reference carries until its file is whole and named by its hash. */
type Pending = 'in' | 'out' | 'hex';

export class TimelineRecorder {
  readonly steps: TapeStep[] = [];
  private readonly startedAt = performance.now();
  private readonly writers = new Map<Pending, FileWriter>();
  /** Each reference made so far, with the writer it belongs to (named at the end). */
  private readonly refs: { ref: FileRef; file: Pending }[] = [];
  private hexExt = 'mp3';
  /** The socket ended: what comes after (the other side's echo of the close) is not the exchange's. */
  private ended = false;

  constructor(
    private readonly store: TapeStore,
    private readonly kind: SocketKind,
  ) {}

  private now(): number {
    return Math.round((performance.now() - this.startedAt) * 10) / 10;
  }

  /** The client's frame. */
  clientFrame(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    if (binary) return void this.steps.push({ dir: 'in', t_ms: this.now(), frame: this.slice('in', this.kind.binaryExt.in, data, 'raw') });
    const text = data.toString('utf8');
    const json = parseJson(text);
    if (json === undefined) return void this.steps.push({ dir: 'in', t_ms: this.now(), text });
    // The speech sockets' audio format is the task's: its file is named for it.
    const format = (json as { audio_setting?: { format?: unknown } } | null)?.audio_setting?.format;
    if (typeof format === 'string' && /^[a-z0-9]{1,8}$/.test(format)) this.hexExt = format;
    this.steps.push({ dir: 'in', t_ms: this.now(), event: json });
  }

  /** The server's frame (its hex audio moved to a file). */
  serverFrame(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    if (binary) return void this.steps.push({ dir: 'out', t_ms: this.now(), frame: this.slice('out', this.kind.binaryExt.out, data, 'raw') });
    const text = data.toString('utf8');
    const json = parseJson(text);
    if (json === undefined) return void this.steps.push({ dir: 'out', t_ms: this.now(), text });
    for (const path of this.kind.hexAudio ?? []) this.moveHex(json, path.split('.'));
    this.steps.push({ dir: 'out', t_ms: this.now(), event: json });
  }

  /** The end of the socket, by either side. */
  closed(dir: 'in' | 'out', code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.steps.push({ dir, t_ms: this.now(), close: { code, reason } });
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
    const ref: FileRef = { $file: `${'0'.repeat(64)}.${ext}`, encoding, offset: at.offset, bytes: at.bytes };
    this.refs.push({ ref, file });
    return ref;
  }

  /** Writes the files and names every reference by its file's hash; the steps are then whole. */
  async finish(): Promise<TapeStep[]> {
    const names = new Map<Pending, string>();
    for (const [file, writer] of this.writers) names.set(file, await writer.finish());
    for (const { ref, file } of this.refs) ref.$file = names.get(file)!;
    return this.steps;
  }

  /** Drops the files (the socket is not taped). */
  async abandon(): Promise<void> {
    for (const writer of this.writers.values()) await writer.abandon();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
