/** What the disk says when a small write in the data dir is tried: ENOSPC, EROFS… or undefined when it works. */
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export function probeWrite(dir: string): string | undefined {
  const probe = join(dir, `.write-check-${process.pid}`);
  try {
    const fd = openSync(probe, 'w');
    try {
      writeSync(fd, Buffer.alloc(4096, 1));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  } finally {
    rmSync(probe, { force: true });
  }
}
