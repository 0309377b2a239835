/**
 * A data dir is checked before anything starts: it must exist (or be creatable) and take a durable write.
 * A folder that cannot (read-only, not a folder, a pseudo file system, a full disk) stops the start with one
 * line, instead of an emulator that acknowledges writes it cannot keep.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Every file the emulator writes in a data dir is its own to read (keys' resources, request bodies). */
export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/**
 * `mkdir -p` one level at a time, each new level private. Node's own recursive mkdir never returns for some paths (a folder under
 * /proc spins a CPU forever), so each missing level is made on its own and the first failure is thrown.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const level of missing) mkdirSync(level, PRIVATE_DIR);
}

/** The problem with `dir` as a data dir, in words, or null when it is usable. */
export function dataDirProblem(dir: string): string | null {
  try {
    makeDirs(dir);
    if (!statSync(dir).isDirectory()) return 'it is not a folder';
  } catch (err) {
    return `it cannot be created (${describe(err)})`;
  }
  const probe = join(dir, `.write-check-${process.pid}`);
  try {
    const fd = openSync(probe, 'w', PRIVATE_FILE);
    try {
      writeSync(fd, 'speech-emulator');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return `a file cannot be written in it (${describe(err)})`;
  } finally {
    rmSync(probe, { force: true });
  }
  return null;
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message;
}
