/** Durable renames: a renamed file is on disk once its folder is synced too. */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** Syncs the folder holding `file`. */
export function syncDirSync(file: string): void {
  const fd = openSync(dirname(file), 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
