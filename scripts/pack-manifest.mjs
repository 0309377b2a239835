#!/usr/bin/env node
/**
 * The package.json that goes into a tarball (`npm pack`, `npm publish`) without the scripts that only
 * mean something in a clone: `prepare` (builds a clone or a git install; a tarball already holds the
 * build), `prepack` and `postpack`. npm lists a tarball's `prepare` among the install scripts a user
 * must approve, and the scripts/ it would run is not shipped, so the tarball carries none of them.
 *
 *   node scripts/pack-manifest.mjs --strip    prepack: keeps package.json aside, writes it without them
 *   node scripts/pack-manifest.mjs --restore  postpack (and the next --strip, after a failed pack): puts it back
 *
 * npm packs package.json from disk, after prepack and before postpack; nothing else changes.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MANIFEST = join(ROOT, 'package.json');
const KEPT = join(ROOT, '.package.json.unpacked');
const CLONE_ONLY = ['prepare', 'prepack', 'postpack'];

function restore() {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
}

function strip() {
  restore();
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  for (const name of CLONE_ONLY) delete manifest.scripts?.[name];
  writeFileSync(KEPT, text);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

if (process.argv.includes('--strip')) strip();
else if (process.argv.includes('--restore')) restore();
else {
  console.error('usage: node scripts/pack-manifest.mjs --strip | --restore');
  process.exit(2);
}
