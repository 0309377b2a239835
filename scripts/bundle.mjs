#!/usr/bin/env node
/**
 * Builds the CLI: the emulator (src/main.ts) as one bundle, dist/emulator.cjs with its source map, and
 * dist/main.js (scripts/boot.mjs), which runs that bundle from a V8 code cache. Loading one file
 * instead of some 400 modules, and not compiling it again at every start, is most of the start-up
 * time. The library entry (dist/index.js and its types) stays as tsc emits it. Dependencies loaded on
 * first use only (audio codecs, metadata parser, JWT signing, the rooms' WebRTC) and pino with its worker-thread
 * transports stay external: they are loaded from node_modules.
 *
 * The code cache (dist/emulator.cjs.cache) is what V8 compiled while the new bundle started the
 * emulator once (ports chosen by the system, state in memory), written when it closed.
 *
 * The package is ESM first; its CommonJS entries, for `require('speech-emulator')` and
 * `require('speech-emulator/client')`, are bundles too: dist/index.cjs and dist/client/index.cjs, each
 * with a .d.cts beside it. They bundle the project's own modules only (dependencies load from
 * node_modules), so their import.meta.url is the bundle's own file URL.
 *
 *   node scripts/bundle.mjs            bundle now (the CLI and the CommonJS entries)
 *   node scripts/bundle.mjs --if-stale bundle the CLI only when a source is newer than the last build (npm start)
 *   node scripts/bundle.mjs --prepare  npm's prepare and prepack (a clone, a git install, npm pack): runs `npm run build`
 *                                      where the sources and the build tools are there, else says why not
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const CACHE = join(DIST, 'emulator.cjs.cache');

export const EXTERNAL = [
  'pino',
  'pino-pretty',
  'thread-stream',
  'mpg123-decoder',
  '@wasm-audio-decoders/flac',
  'music-metadata',
  'jose',
  // The MP3 encoders, loaded on the first MP3 request (the WebAssembly one inlines its binary as strings).
  'wasm-media-encoders',
  '@breezystack/lamejs',
  // The Opus encoder, loaded on the first Opus request (it reads its WebAssembly from its own folder).
  'opusscript',
  // The Ogg Vorbis decoder of /_emulator/hear, loaded on the first Vorbis file (it inlines its
  // WebAssembly as a string of Latin-1 and wider characters, which made the whole bundle a two-byte string).
  '@wasm-audio-decoders/ogg-vorbis',
  // The rooms' WebRTC stack and LiveKit's protocol classes, loaded on the first room connection.
  'werift',
  '@livekit/protocol',
  // Fastify's default schema compilers (Ajv, fast-json-stringify): the apps give their own (zod), so
  // Fastify never requires these; left out, start-up does not parse them.
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
];

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
    built = statSync(CACHE).mtimeMs;
  } catch {
    return true;
  }
  return [join(ROOT, 'src'), join(ROOT, 'package-lock.json'), join(ROOT, 'scripts', 'bundle.mjs'), join(ROOT, 'scripts', 'boot.mjs')].some(
    (p) => newest(p) > built,
  );
}

/** The bundle's dynamic imports of external packages call the loader's import() (see scripts/boot.mjs). */
const IMPORT = '__imp_'; // as long as `import`: columns, and so the source map, stay right

/** Builds into `dist` (dist/ by default; a test builds elsewhere in the project, where packages and fixtures resolve). */
export async function bundle(dist = DIST) {
  const { build } = await import('esbuild');
  const out = join(dist, 'emulator.cjs');
  const cache = `${out}.cache`;
  rmSync(cache, { force: true });
  await build({
    entryPoints: [join(ROOT, 'src', 'main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    // CommonJS in a function, compiled by the loader with vm.Script: the one way to a code cache on Node 20.
    format: 'cjs',
    banner: { js: `(function (exports, require, module, __filename, __dirname, __importMetaUrl, ${IMPORT}) {` },
    footer: { js: '})' },
    define: { 'import.meta.url': '__importMetaUrl' },
    sourcemap: true,
    // Node 20 reads and parses the whole map when it loads the bundle (--enable-source-maps):
    // without the sources' text it is a third of the size. Stack traces keep files and lines.
    sourcesContent: false,
    minifySyntax: true,
    // A third less text for V8 to read and check against the code cache at every start (frames are
    // mapped through the source map; names are kept).
    minifyWhitespace: true,
    external: EXTERNAL,
    logLevel: 'warning',
  });
  // A script compiled by vm has no import() of its own (not without --experimental-vm-modules).
  const code = readFileSync(out, 'utf8');
  if (code.includes(IMPORT + '(')) throw new Error(`${IMPORT}( is already used in the bundle`);
  const rewritten = code.replace(/\bimport\("([^"]+)"\)/g, (_call, specifier) => {
    if (!EXTERNAL.some((e) => specifier === e || specifier.startsWith(`${e}/`))) throw new Error(`dynamic import of ${specifier} is not an external package`);
    return `${IMPORT}("${specifier}")`;
  });
  // Left over, once comments are set aside: a dynamic import of something else (it would fail at run time).
  const uncommented = rewritten.replace(/\/\*[\s\S]*?\*\//g, '');
  const left = /\bimport\(/.exec(uncommented);
  if (left) throw new Error(`a dynamic import the build cannot route: ${uncommented.slice(left.index, left.index + 60)}`);
  writeFileSync(out, asciiOnly(rewritten));
  cpSync(join(ROOT, 'scripts', 'boot.mjs'), join(dist, 'main.js'));
  // Files read at run time next to their module (new URL('./inspector/', import.meta.url)) sit next to the bundle.
  cpSync(join(ROOT, 'src', 'control', 'inspector'), join(dist, 'inspector'), { recursive: true });
  await writeCodeCache(dist);
  statSync(cache);
}

/**
 * The bundle as ASCII: the loader reads it as latin1, so V8 holds its 2 MB one byte a character and
 * outside the JS heap (one character beyond Latin-1 made it a two-byte string of 4 MB in the heap).
 * esbuild escapes strings but leaves regular expression literals as written (`/女|woman/`): each
 * character beyond ASCII becomes its `\uXXXX` escape, which means the same character in a pattern, a
 * string or a name. Not in a raw template (`String.raw`), where an escape stays a backslash: the
 * build stops instead (such a package is made external). Columns after an escaped character on its
 * line move by five in stack traces; lines stay right.
 */
function asciiOnly(code) {
  for (let at = code.indexOf('String.raw`'); at !== -1; at = code.indexOf('String.raw`', at + 1)) {
    const end = code.indexOf('`', at + 11);
    if (/[^\x00-\x7f]/.test(code.slice(at, end)))
      throw new Error(`the bundle holds a raw template with characters beyond ASCII (make its package external): ${code.slice(at, at + 60)}`);
  }
  return code.replace(/[^\x00-\x7f]/g, (c, at) => {
    if (code[at - 1] === '\\') throw new Error(`an escaped character beyond ASCII in the bundle: ${JSON.stringify(code.slice(at - 40, at + 5))}`);
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Starts the new build once and stops it: the code it compiled on the way is kept as the cache. */
async function writeCodeCache(dist) {
  // Default settings (none of the builder's EMULATOR_*), default V8 flags (a cache is only taken with the flags it was made with).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EMULATOR_') && k !== 'NODE_OPTIONS' && k !== 'LOG_LEVEL'));
  Object.assign(env, { SPEECH_EMULATOR_CODE_CACHE: 'write', LOG_LEVEL: 'silent', EMULATOR_HOST: '127.0.0.1' });
  const child = spawn(process.execPath, [join(dist, 'main.js'), '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const started = await new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('speech-emulator is running')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (started) child.kill('SIGTERM');
  const code = await exited;
  if (!started || code !== 0) throw new Error(`the new build did not start and close cleanly (exit ${code}): ${err.trim() || out.trim()}`);
}

/** Resolves the library's imports of the client entry (src/client/index.ts) to the client's bundle. */
const sharedClient = {
  name: 'shared-client',
  setup(build) {
    build.onResolve({ filter: /\/client\/index\.js$/ }, (args) =>
      join(args.resolveDir, args.path) === join(ROOT, 'src', 'client', 'index.js') ? { path: './client/index.cjs', external: true } : undefined,
    );
  },
};

/** The CommonJS entries: the library (src/index.ts) and the control client (src/client/index.ts). */
export async function bundleLibrary(dist = DIST) {
  const { build } = await import('esbuild');
  const entries = [
    { from: join(ROOT, 'src', 'index.ts'), to: join(dist, 'index.cjs'), types: './index.js' },
    { from: join(ROOT, 'src', 'client', 'index.ts'), to: join(dist, 'client', 'index.cjs'), types: './index.js' },
  ];
  for (const entry of entries) {
    mkdirSync(dirname(entry.to), { recursive: true });
    await build({
      entryPoints: [entry.from],
      outfile: entry.to,
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      // Dependencies are required from node_modules, as the ES modules import them.
      packages: 'external',
      // Files found next to a module (the inspector, package.json, fixtures) are found next to the bundle.
      banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
      define: { 'import.meta.url': '__importMetaUrl' },
      // The library requires the client's own entry, so both entries share one ControlClient (and its error classes).
      plugins: entry.from.endsWith(join('src', 'index.ts')) ? [sharedClient] : [],
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'warning',
    });
    // The types of the ES module serve the CommonJS entry (a .d.cts beside it is what TypeScript reads for require).
    writeFileSync(entry.to.replace(/\.cjs$/, '.d.cts'), `export * from '${entry.types}';\n`);
  }
}

/**
 * npm's prepare: builds when there is something to build with. Skipped (with one line saying why) where
 * the sources are not there (an image that installs before it copies them) or the build tools are
 * not (dev dependencies left out).
 */
function prepare() {
  if (!existsSync(join(ROOT, 'src', 'index.ts'))) return console.log('speech-emulator: no src/ here, nothing to build');
  const require = createRequire(import.meta.url);
  for (const tool of ['typescript', 'esbuild']) {
    try {
      require.resolve(`${tool}/package.json`);
    } catch {
      return console.log(`speech-emulator: ${tool} is not installed (dev dependencies left out), not building`);
    }
  }
  const npm = process.env.npm_execpath;
  const run =
    npm && /\.c?js$/.test(npm)
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--prepare')) prepare();
  else if (process.argv.includes('--if-stale')) {
    if (stale()) await bundle();
  } else {
    await bundleLibrary();
    await bundle();
  }
}
