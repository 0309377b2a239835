import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve } from 'node:path';

/**
 * Stack frames of the built bundle (dist/emulator.cjs) named by their sources, for what the emulator logs.
 *
 * The built CLI does not turn on Node's source-map support for the whole process: with it on, every
 * stack V8 formats is mapped, and Node formats the stacks of errors nobody logs (a client that leaves
 * mid-answer gives EPIPE and ECONNRESET errors whose stacks are formatted); the first one parsed the
 * bundle's whole map, 36 MB of JS heap kept for the life of the process. Here the map is read and
 * parsed when a logged error first has a frame in the bundle, and kept for the next ones.
 * Frames elsewhere (the sources run by tsx, packages loaded from node_modules) are left as they are.
 */
const maps = new Map<string, SourceMap | null>();

function mapOf(bundle: string): SourceMap | null {
  let map = maps.get(bundle);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      // No map beside the bundle (or not one Node reads): frames stay as they are.
      map = null;
    }
    maps.set(bundle, map);
  }
  return map;
}

/** A frame's location in the bundle: `/…/emulator.cjs:LINE:COLUMN` (in parentheses or after `at `). */
const BUNDLE_FRAME = /(\(|at )((?:file:\/\/)?\/[^\s()]*\.cjs):(\d+):(\d+)/g;

/** The stack with each frame of a bundle that has a map beside it named by its source file, line and column. */
export function sourceStack(stack: string): string {
  if (!stack.includes('.cjs:')) return stack;
  return stack.replace(BUNDLE_FRAME, (frame, before: string, file: string, line: string, column: string) => {
    const path = file.startsWith('file://') ? new URL(file).pathname : file;
    const origin = mapOf(path)?.findOrigin(Number(line), Number(column));
    if (!origin || !('fileName' in origin)) return frame;
    return `${before}${resolve(dirname(path), origin.fileName)}:${origin.lineNumber}:${origin.columnNumber}`;
  });
}
