/**
 * A folder of tapes: `<id>.json` per exchange, `files/<sha256>.<ext>` for the bytes they reference, and `.used.json`,
 * the ids a replaying run used (what `tapes prune` reads). Every write is atomic (a temporary file, fsynced, then
 * renamed, then the folder fsynced): a full disk or a crash leaves the old file or none, never half a tape taken for
 * a whole one. A tape that cannot be read is named at open with its file and what is wrong.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, FileWriter, writeAtomic } from './files.js';

import { FILES_DIR, isFileRef, parseTape, stepSchema, tapeText, TapeError, type FileRef, type Tape, type TapeStep } from './format.js';

const USED_FILE = '.used.json';

/** Every file reference inside a value (a body, an event), depth first. */
export function* fileRefsIn(value: unknown): Generator<FileRef> {
  if (isFileRef(value)) {
    yield value;
    return;
  }
  if (Array.isArray(value)) for (const v of value) yield* fileRefsIn(v);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) yield* fileRefsIn(v);
}

/**
 * Why a folder is not a folder of tapes, or null when it is (or cannot be listed: opening it says so). In a folder of
 * tapes every `*.json` file carries the format's version field (`"tape": n`) and an id (an empty folder holds none).
 * The control plane opens only such folders, and never repeats what a file that is not a tape holds.
 */
export async function notTapesFolder(dir: string): Promise<string | null> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch {
    return null;
  }
  for (const name of names) {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(join(dir, name), 'utf8'));
    } catch {
      value = undefined;
    }
    const v = value as { tape?: unknown; id?: unknown } | undefined;
    if (typeof v?.tape !== 'number' || typeof v.id !== 'string')
      return "the folder is not a folder of tapes: it holds a .json file without the tape format's version field";
  }
  return null;
}

export class TapeStore {
  readonly filesDir: string;
  /** Tapes by id, in the order of their ids. */
  readonly tapes = new Map<string, Tape>();
  /** Tapes written by this run whose timeline stays on disk only (a socket's: `writeTapeStreamed`). */
  private readonly written = new Set<string>();
  /** Small files read whole, kept for the next reference to them (bounded: FILE_CACHE_BYTES in all). */
  private readonly files = new Map<string, Buffer>();
  private cachedBytes = 0;
  /** A file at most this large is read whole and kept; a larger one is read slice by slice (a long stream's audio). */
  private static readonly WHOLE_FILE_BYTES = 4 << 20;
  private static readonly FILE_CACHE_BYTES = 64 << 20;

  private constructor(readonly dir: string) {
    this.filesDir = join(dir, FILES_DIR);
  }

  /**
   * Opens a folder of tapes and reads every tape in it. `create`: the folder is made when missing (recording);
   * otherwise a missing folder is an error. Throws TapeError naming the first damaged tape.
   */
  static async open(dir: string, { create = false }: { create?: boolean } = {}): Promise<TapeStore> {
    const store = new TapeStore(dir);
    if (create) await mkdir(store.filesDir, { recursive: true });
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      throw new TapeError(dir, `the tape folder cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const fileNames = new Set(await readdir(store.filesDir).catch(() => [] as string[]));
    for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort()) {
      const tape = parseTape(name, await readFile(join(dir, name), 'utf8'));
      if (`${tape.id}.json` !== name) throw new TapeError(name, `its id "${tape.id}" is not its file name (expected "${name.slice(0, -5)}")`);
      for (const ref of fileRefsIn([tape.request, tape.answer, tape.downloads]))
        if (!fileNames.has(ref.$file)) throw new TapeError(name, `references ${FILES_DIR}/${ref.$file}, which is missing`);
      store.tapes.set(tape.id, tape);
    }
    return store;
  }

  /** Stores bytes under their hash (once: the same bytes are one file); the file's name. */
  async putFile(bytes: Uint8Array, ext: string): Promise<string> {
    const name = `${createHash('sha256').update(bytes).digest('hex')}.${ext}`;
    await this.putNamed(name, bytes);
    return name;
  }

  /** @internal Writes a file already named by its hash, unless it is there. */
  async putNamed(name: string, bytes: Uint8Array): Promise<void> {
    const path = join(this.filesDir, name);
    if (await exists(path)) return;
    await mkdir(this.filesDir, { recursive: true });
    await writeAtomic(path, bytes);
  }

  /** A file writer for bytes that arrive over time (a stream's chunks). */
  fileWriter(ext: string): FileWriter {
    return new FileWriter(this, ext);
  }

  /**
   * The bytes a reference names (a slice when it has one). A small file is read once and kept (the cache is bounded);
   * a slice of a large one is read alone, so replaying a long stream never holds all its audio at once.
   */
  async bytesOf(ref: FileRef): Promise<Buffer> {
    const path = join(this.filesDir, ref.$file);
    let whole = this.files.get(ref.$file);
    const sliced = ref.offset !== undefined || ref.bytes !== undefined;
    if (!whole && sliced && ref.bytes !== undefined && (await stat(path)).size > TapeStore.WHOLE_FILE_BYTES) {
      const handle = await open(path, 'r');
      try {
        const out = Buffer.alloc(ref.bytes);
        const { bytesRead } = await handle.read(out, 0, ref.bytes, ref.offset ?? 0);
        return out.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    }
    if (!whole) {
      whole = await readFile(path);
      if (whole.length <= TapeStore.WHOLE_FILE_BYTES) this.keep(ref.$file, whole);
    }
    if (!sliced) return whole;
    const from = ref.offset ?? 0;
    return whole.subarray(from, ref.bytes === undefined ? undefined : from + ref.bytes);
  }

  /** Keeps a file read whole, the oldest dropped past the cache's bound. */
  private keep(name: string, bytes: Buffer): void {
    this.files.set(name, bytes);
    this.cachedBytes += bytes.length;
    for (const [old, held] of this.files) {
      if (this.cachedBytes <= TapeStore.FILE_CACHE_BYTES) break;
      this.files.delete(old);
      this.cachedBytes -= held.length;
    }
  }

  /** Whether a tape of this id is in the folder (read at open, or written since). */
  has(id: string): boolean {
    return this.tapes.has(id) || this.written.has(id);
  }

  /** How many tapes the folder holds (read at open, or written since). */
  get count(): number {
    let n = this.tapes.size;
    for (const id of this.written) if (!this.tapes.has(id)) n++;
    return n;
  }

  /** Writes under way (a socket's tape assembled after it ended): whoever closes the folder waits for them. */
  private readonly writing = new Set<Promise<unknown>>();

  /** Keeps `write` among the writes under way until it settles. */
  track<T>(write: Promise<T>): Promise<T> {
    this.writing.add(write);
    void write.then(
      () => this.writing.delete(write),
      () => this.writing.delete(write),
    );
    return write;
  }

  /** Resolves once no write is under way. */
  async settled(): Promise<void> {
    while (this.writing.size) await Promise.allSettled([...this.writing]);
  }

  /** Writes a tape (atomically) and keeps it. */
  async writeTape(tape: Tape): Promise<void> {
    await writeAtomic(join(this.dir, `${tape.id}.json`), tapeText(tape));
    this.tapes.set(tape.id, tape);
  }

  /**
   * Writes a tape whose stream's steps come one at a time (a socket's timeline read back from its spill), atomically,
   * with the same text `writeTape` gives the whole tape; the tape is not kept in memory.
   * `head` is the tape with no steps.
   */
  async writeTapeStreamed(head: Tape, steps: AsyncIterable<TapeStep>): Promise<void> {
    const stream = head.answer.stream;
    if (!stream || stream.steps.length) throw new Error('a streamed tape is written from its head (a stream without steps) and its steps');
    const mark = '\u0000steps';
    const text = tapeText({ ...head, answer: { ...head.answer, stream: { ...stream, steps: [mark as unknown as TapeStep] } } });
    const at = text.indexOf(JSON.stringify(mark));
    const before = text.slice(0, at);
    const after = text.slice(at + JSON.stringify(mark).length);
    const indent = before.slice(before.lastIndexOf('\n') + 1);
    await writeAtomic(join(this.dir, `${head.id}.json`), async (handle) => {
      let out = '';
      let count = 0;
      for await (const step of steps) {
        out += count++ ? `,\n${indent}` : before;
        out += JSON.stringify(stepSchema.parse(step), null, 2).replaceAll('\n', `\n${indent}`);
        if (out.length >= 1 << 16) (await handle.write(out), (out = ''));
      }
      await handle.write(count ? out + after : tapeText(head));
    });
    this.written.add(head.id);
  }

  /** Removes a tape (its files stay until no tape names them: `pruneFiles`). */
  async removeTape(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
    this.tapes.delete(id);
  }

  /** Removes the files no tape references; their names. */
  async pruneFiles(): Promise<string[]> {
    const used = new Set<string>();
    for (const tape of this.tapes.values()) for (const ref of fileRefsIn([tape.request, tape.answer, tape.downloads])) used.add(ref.$file);
    const gone: string[] = [];
    for (const name of await readdir(this.filesDir).catch(() => [] as string[])) {
      if (used.has(name)) continue;
      await rm(join(this.filesDir, name), { force: true });
      gone.push(name);
    }
    return gone;
  }

  /** The ids the last replaying run used, or null when no run left its list. */
  async readUsed(): Promise<Set<string> | null> {
    try {
      const list = JSON.parse(await readFile(join(this.dir, USED_FILE), 'utf8')) as { used?: unknown };
      if (!Array.isArray(list.used)) throw new TapeError(USED_FILE, 'has no "used" list');
      return new Set(list.used.map(String));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      if (err instanceof TapeError) throw err;
      throw new TapeError(USED_FILE, `cannot be read (${(err as Error).message})`);
    }
  }

  /** Writes the ids a replaying run used (atomically). */
  async writeUsed(ids: Iterable<string>): Promise<void> {
    await writeAtomic(join(this.dir, USED_FILE), `${JSON.stringify({ used: [...ids].sort() }, null, 2)}\n`);
  }
}
