// postinstall: makes @breezystack/lamejs keep the sample rate it is asked for. Its Mp3Encoder never sets
// LAME's output rate, so LAME silently resamples low-bitrate encodes (44.1 kHz at 32 kbps comes out at
// 22.05 kHz). One assignment fixes it. Idempotent; works in this repository and where the package is a
// dependency (lamejs hoisted above it). The MP3 writer refuses to run unpatched, with a clear error.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const target = join('node_modules', '@breezystack', 'lamejs', 'dist', 'lamejs.js');
let dir = dirname(fileURLToPath(import.meta.url));
let file = null;
for (let i = 0; i < 8 && !file; i++) {
  if (existsSync(join(dir, target))) file = join(dir, target);
  dir = dirname(dir);
}
if (!file) {
  console.warn('speech-emulator: @breezystack/lamejs not found; MP3 output will refuse to run until it is installed');
  process.exit(0);
}
const source = readFileSync(file, 'utf8');
// In Mp3Encoder: `R.num_channels = w, R.in_samplerate = Z, R.brate = X, …` (names are minified).
const pattern = /(\b(\w+)\.in_samplerate = (\w+), )(?!\w+\.out_samplerate)(\2\.brate = )/;
if (/\b(\w+)\.in_samplerate = (\w+), \1\.out_samplerate = \2, \1\.brate = /.test(source)) process.exit(0);
if (!pattern.test(source)) {
  console.warn(`speech-emulator: could not patch ${file}; MP3 output will refuse to run`);
  process.exit(0);
}
writeFileSync(file, source.replace(pattern, '$1$2.out_samplerate = $3, $4'));
