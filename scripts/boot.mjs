#!/usr/bin/env node
/**
 * The speech-emulator CLI as built (dist/main.js, copied here by scripts/bundle.mjs). The emulator is
 * one bundle beside this file, emulator.cjs; this runs it from the V8 code cache made by the build once
 * the emulator had started (emulator.cjs.cache), so a start neither parses nor compiles the code it
 * runs. A cache V8 does not accept (another Node version, other V8 flags) is ignored: the bundle is then
 * compiled as usual. The build deletes the cache before it writes the bundle, and writes it again after.
 *
 * SPEECH_EMULATOR_CODE_CACHE=write is the build's own start: no cache is read, and the code compiled
 * by the time the process exits is written as the cache.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

// Packages loaded from node_modules (pino at every start, codecs on first use) are compiled from Node's
// own compile cache (the bundle has its code cache, below): about 10 ms of a start's CPU on Node 24.
// Node keeps it under the system's temporary folder; NODE_DISABLE_COMPILE_CACHE=1 leaves it off.
if (typeof module.enableCompileCache === 'function' && !process.env.NODE_DISABLE_COMPILE_CACHE) module.enableCompileCache();

const url = new URL('./emulator.cjs', import.meta.url);
const file = fileURLToPath(url);
const cacheFile = `${file}.cache`;
const writing = process.env.SPEECH_EMULATOR_CODE_CACHE === 'write';

let cachedData;
if (!writing) {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache: compiled from the source.
  }
}
// The bundle is ASCII (the build checks it): read as latin1, its 2 MB are one byte a character and
// live outside the JS heap (Node makes a large latin1 string external); read as UTF-8, a single
// character outside Latin-1 made V8 hold it as two bytes a character, in the heap.
const script = new Script(readFileSync(file, 'latin1'), { filename: file, cachedData });
// V8 has taken what it needs from the cache: its 2 MB are not kept for the life of the process.
cachedData = undefined;
if (writing) process.once('exit', () => writeFileSync(cacheFile, script.createCachedData()));

// Node's source-map support is left off: with it on, every stack V8 formats is mapped, and Node formats
// the stacks of errors nobody shows (a client that leaves gives EPIPE and ECONNRESET errors); the first
// one parsed the bundle's whole map into 36 MB of JS heap, kept for the life of the process. The
// emulator's logger names the bundle's frames by their sources itself, reading the map beside the
// bundle (emulator.cjs.map) when it first logs an error (src/source-stack.ts).

// The bundle is CommonJS wrapped in a function (scripts/bundle.mjs): its import.meta.url is this
// bundle's, and its dynamic imports (packages loaded on first use) go through this module's import().
script.runInThisContext()({}, createRequire(file), { exports: {} }, file, dirname(file), url.href, (specifier) => import(specifier));
