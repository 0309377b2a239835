/**
 * The start's sweep of stored files no record names. A file is written (and fsynced) before the row
 * naming it is committed, and a reset commits before it removes files: a `kill -9` between the two
 * leaves a file on disk that nothing will ever read, and an upload cut mid-way leaves its temporary
 * file. At start, before any listener opens, such files are removed and counted.
 *
 * Only files of the kinds records own are looked at: uploads, podcasts, voices' reference audio, speech
 * files, uploads being received, and any write's temporary file. Files reached by a signed link only
 * (speech URL-mode audio and subtitles under `speech/`, `/mcp` audio under `mcp/`, a clone's demo
 * audio) have no record by design and are left to their link. A file is never removed when a record
 * names it: neither when an area's record says so, nor when its path appears anywhere in a stored row
 * (a record of an area this version reads later, or one whose time is over).
 */
import { readdirSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Folders under `blobs/` whose every file belongs to a record. */
const RECORD_FOLDERS = ['uploads', 'podcasts', 'voices', 'speech-files', 'incoming'];
/** A clone's demo audio sits among the speech files but is reached by its link only. */
const LINK_ONLY = /^speech-files\/[^/]+\/demo-[^/]*$/;
/** A write's temporary file (core/state/blobs.ts): `<name>.tmp-<pid>-<n>`; no write runs before the start ends. */
const TEMPORARY = /\.tmp-\d+-\d+$/;

/** Paths (relative to `root`, with `/`) of every file under `dir`. */
function filesUnder(root: string, dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(root, path);
    return e.isFile() ? [relative(root, path).split(sep).join('/')] : [];
  });
}

function sweepable(rel: string): boolean {
  if (TEMPORARY.test(rel)) return true;
  const slash = rel.indexOf('/');
  return slash !== -1 && RECORD_FOLDERS.includes(rel.slice(0, slash)) && !LINK_ONLY.test(rel);
}

/**
 * Removes the files under `blobsDir` that no record names: `named` are the files areas' records name,
 * `rows` the stored rows' JSON (a path found in one is kept whatever its area). Answers the paths removed.
 */
export function sweepOrphanFiles(blobsDir: string, named: ReadonlySet<string>, rows: readonly string[]): string[] {
  const candidates = filesUnder(blobsDir, blobsDir).filter((rel) => sweepable(rel) && !named.has(rel));
  // Usually none: the rows are only searched for the few files no area's record named.
  const orphans = candidates.filter((rel) => {
    const asJson = JSON.stringify(rel).slice(1, -1);
    return !rows.some((row) => row.includes(asJson));
  });
  const removed: string[] = [];
  for (const rel of orphans) {
    try {
      rmSync(join(blobsDir, rel), { force: true });
      removed.push(rel);
    } catch {
      // Left for the next start (a read-only data dir already refused the start before this).
    }
  }
  return removed;
}
