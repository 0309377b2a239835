import { rmSync } from 'node:fs';
import * as z from 'zod';
import { accountArea, areaOf, type AccountArea } from '../../../core/state/areas.js';
import type { Emulator } from '../../../core/emulator.js';

/** What the state view shows of one generated podcast. */
export interface PodcastEntry {
  objectKey: string;
  durationSec: number;
  lines: number;
  pair: string;
  speed: number;
  createdAtMs: number;
  urlExpiresAtMs: number;
}

interface PodcastArea extends AccountArea<PodcastEntry[]> {
  add(accountId: string, entry: PodcastEntry): void;
}

const NAME = 'podcasts';
/** Entries kept per account (state view, and the files removed on reset). */
const KEEP = 1000;

/** The podcast area of an emulator, registered on first use (reset drops entries and audio files). */
export function podcastStore(emu: Emulator): PodcastArea {
  return areaOf(emu, NAME, () => createArea(emu));
}

function createArea(emu: Emulator): PodcastArea {
  const area = accountArea<PodcastEntry[]>({
    name: NAME,
    savedByAccount: {
      value: z.array(
        z.looseObject({
          objectKey: z.string().min(1),
          durationSec: z.number(),
          lines: z.number(),
          pair: z.string(),
          speed: z.number(),
          createdAtMs: z.number(),
          urlExpiresAtMs: z.number(),
        }),
      ),
      // Each listed podcast's audio is a stored file (kept until a reset): a start that does not find it stops, naming it.
      blobs: (list) => list.map((e) => e.objectKey),
    },
    show: (list) => list ?? [],
    // Remove the listed files only: a podcast made right after the reset must survive.
    // Synchronous, so a link is dead as soon as the reset has answered.
    dropFiles: (_accountId, dropped) => {
      for (const e of dropped.flat()) rmSync(emu.blobs.file(e.objectKey), { force: true });
    },
  });
  return {
    ...area,
    add(accountId, entry) {
      const list = area.byAccount.get(accountId) ?? [];
      list.push(entry);
      if (list.length > KEEP) list.shift();
      area.byAccount.set(accountId, list);
    },
  };
}
