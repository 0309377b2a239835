/**
 * @breezystack/lamejs, loaded so that it keeps the sample rate it is asked for, without changing the
 * installed package. Its Mp3Encoder sets LAME's input rate and never the output rate, so LAME picks
 * its own for low bit rates and resamples (44.1 kHz at 32 kbit/s comes out at 22.05 kHz). Here the
 * package's ES module is read, the one missing assignment (`out_samplerate = in_samplerate`) is added
 * beside the input rate, and the module is run as a function whose exports it returns. A source that
 * already has it (a copy patched on disk) is run as it is; one where the place cannot be found
 * (another release) is refused with an error naming the package and version, never run unfixed.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** What the package exports that the MP3 writer uses, as the package types it (a type query: nothing is imported). */
export type LamejsModule = Pick<typeof import('@breezystack/lamejs'), 'Mp3Encoder'>;

// In Mp3Encoder: `R.num_channels = w, R.in_samplerate = Z, R.brate = X, …` (names are minified).
const UNSET = /(\b(\w+)\.in_samplerate = (\w+), )(?!\w+\.out_samplerate)(\2\.brate = )/;
const SET = /\b(\w+)\.in_samplerate = (\w+), \1\.out_samplerate = \2, \1\.brate = /;
// The module's one export statement: `export { Sr as Mp3Encoder, dr as WavHeader, fa as default };`
const EXPORTS = /\bexport\s*\{([^}]*)\}\s*;?\s*$/;

/** The source with LAME's output rate set to the input rate, or a reason it cannot be. */
export function withOutputRate(source: string): { ok: true; source: string } | { ok: false; reason: string } {
  if (SET.test(source)) return { ok: true, source };
  if (!UNSET.test(source)) return { ok: false, reason: 'the place where Mp3Encoder sets its input rate was not found' };
  return { ok: true, source: source.replace(UNSET, '$1$2.out_samplerate = $3, $4') };
}

/** Runs the package's ES module source (self-contained, one export statement) and answers its exports. */
export function runLamejs(source: string, filename: string): LamejsModule {
  const fixed = withOutputRate(source);
  if (!fixed.ok) throw new Error(`@breezystack/lamejs (${filename}): cannot keep the requested sample rate: ${fixed.reason}`);
  const exported = EXPORTS.exec(fixed.source);
  if (!exported) throw new Error(`@breezystack/lamejs (${filename}): no export statement at the end of the module`);
  const fields = exported[1]!
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [local, name = local] = part.split(/\s+as\s+/);
      return `${JSON.stringify(name)}: ${local}`;
    });
  const body = `${fixed.source.slice(0, exported.index)}\nreturn { ${fields.join(', ')} };`;
  // A function in strict mode, as a module is; the file name keeps stack frames pointing at the package.
  const factory = new Script(`(function () {'use strict';\n${body}\n})`, { filename }).runInThisContext() as () => LamejsModule;
  return factory();
}

let loaded: LamejsModule | undefined;

/** The package's Mp3Encoder, keeping the requested sample rate. Read and compiled on first use only. */
export function loadLamejs(): LamejsModule {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  // The package exports no package.json: its CommonJS entry sits beside the ES module in dist/.
  const file = join(dirname(require.resolve('@breezystack/lamejs')), 'lamejs.js');
  loaded = runLamejs(readFileSync(file, 'utf8'), file);
  return loaded;
}
