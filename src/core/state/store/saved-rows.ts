/**
 * Reading what a data dir saved (core/state/store/state-store.ts loads it): stored rows joined back into
 * each part's saved shape, the stored files their records name looked for, and a JSON snapshot of an
 * earlier version written as rows.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Logger } from 'pino';
import type { StateArea } from '../areas.js';
import type { Refusal } from '../snapshots.js';
import type { SavedSnapshot } from '../snapshot-schema.js';
import { createDatabase } from './database.js';
import { areaRows, keptRows, type PartRows } from './parts.js';
import { ACCOUNT, DATA, ID, PART, RowWriter, type StoredRow } from './row-writer.js';

/** Stored rows of one part joined into its saved shape; a row that is not JSON is named. */
export function joinRows(part: PartRows, rows: StoredRow[], refuse: Refusal): unknown {
  const values = rows.map((r) => {
    try {
      return { id: r[ID], account: r[ACCOUNT], value: JSON.parse(r[DATA]) as unknown };
    } catch (err) {
      throw refuse(`row ${r[ID]} of ${part.name}: ${(err as Error).message}`);
    }
  });
  return part.join(values);
}

export function groupBy(rows: StoredRow[]): Map<string, StoredRow[]> {
  const out = new Map<string, StoredRow[]>();
  for (const r of rows) {
    const group = out.get(r[PART]);
    if (group) group.push(r);
    else out.set(r[PART], [r]);
  }
  return out;
}

/**
 * Every stored file a loaded record names is looked for. A record whose file is gone (deleted by hand,
 * or a crash of an earlier version in the middle of a reset) does not stop the start: the start says
 * which records lost their content, and an operation on such a record answers the family's error
 * saying its stored file is missing (core/state/blobs.ts `missing`). Answers the files records name.
 */
export function checkBlobs(
  byArea: Map<string, StoredRow[]>,
  areas: ReadonlyMap<string, StateArea>,
  dataDir: string,
  file: string,
  logger: Logger,
): Set<string> {
  const named = new Set<string>();
  const lost: string[] = [];
  for (const [name, rows] of byArea) {
    const blobsOf = areas.get(name)?.records?.blobsOf;
    // Only areas that keep files are read again: a start with 100,000 sessions does not look at each.
    if (!blobsOf) continue;
    for (const row of rows)
      for (const rel of blobsOf(JSON.parse(row[DATA]))) {
        named.add(rel);
        if (!existsSync(join(dataDir, 'blobs', rel))) lost.push(`record ${row[ID]} of ${row[PART]} (stored file ${rel})`);
      }
  }
  if (lost.length)
    logger.warn(
      `${lost.length} record(s) in ${file} lost their content, their stored file is missing from ${join(dataDir, 'blobs')}: ${lost.slice(0, 20).join('; ')}${lost.length > 20 ? `; and ${lost.length - 20} more` : ''}. The emulator runs; an operation on such a record answers that its content is missing`,
    );
  return named;
}

/** A new database holding a checked JSON snapshot, made in one transaction. */
export function migrateSnapshot(file: string, core: readonly PartRows[], areas: ReadonlyMap<string, StateArea>, saved: SavedSnapshot): DatabaseSync {
  const byName = new Map<string, PartRows>(core.map((p) => [p.name, p]));
  const fields: Record<string, unknown> = {
    accounts: saved.accounts,
    signatures: saved.signatures,
    ids: saved.ids,
    faults: saved.faults,
    clock: saved.saved_at_ms,
  };
  return createDatabase(file, (db) => {
    const writer = new RowWriter(db);
    for (const [name, part] of Object.entries(fields)) if (part !== undefined) writer.insertAll(byName.get(name)!, byName.get(name)!.split(part));
    for (const [name, part] of Object.entries(saved.areas ?? {})) {
      const area = areas.get(name);
      const rows = area ? areaRows(area) : keptRows(name, part);
      writer.insertAll(rows, rows.split(part));
    }
  });
}
