#!/usr/bin/env node
/**
 * Bundles the CLI (src/main.ts) into one file, dist/main.js, with its source map: loading one file
 * instead of some 400 modules is most of the start-up time. The library entry (dist/index.js and its
 * types) stays as tsc emits it. Dependencies loaded on first use only (audio decoders, metadata
 * parser, JWT signing) and pino's worker-thread transports stay external.
 *
 *   node scripts/bundle.mjs            bundle now
 *   node scripts/bundle.mjs --if-stale bundle only when a source is newer than dist/main.js (npm start)
 */
import { cpSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'main.js');

export const EXTERNAL = ['pino', 'pino-pretty', 'thread-stream', 'mpg123-decoder', '@wasm-audio-decoders/flac', 'music-metadata', 'jose'];

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const name of readdirSync(path)) m = Math.max(m, newest(join(path, name)));
  return m;
}

function stale() {
  let built;
  try {
    built = statSync(OUT).mtimeMs;
  } catch {
    return true;
  }
  return [join(ROOT, 'src'), join(ROOT, 'package-lock.json'), join(ROOT, 'scripts', 'bundle.mjs')].some((p) => newest(p) > built);
}

export async function bundle() {
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(ROOT, 'src', 'main.ts')],
    outfile: OUT,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: true,
    // Node reads the whole map at start with --enable-source-maps: file names and lines are what a
    // stack trace needs, not the sources' text.
    sourcesContent: false,
    minifySyntax: true,
    external: EXTERNAL,
    logLevel: 'warning',
    // Bundled CommonJS dependencies call require(): give the ESM bundle one.
    banner: { js: "import { createRequire as __emuCreateRequire } from 'node:module'; const require = __emuCreateRequire(import.meta.url);" },
  });
  // Files read at run time next to their module (new URL('./inspector/', import.meta.url)) sit next to the bundle.
  cpSync(join(ROOT, 'src', 'control', 'inspector'), join(ROOT, 'dist', 'inspector'), { recursive: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.argv.includes('--if-stale') || stale()) await bundle();
}
