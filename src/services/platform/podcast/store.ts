import { rmSync } from 'node:fs';
import * as z from 'zod';
import { accountRecords, areaOf, checkWith } from '../../../core/areas.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';

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

interface PodcastArea extends StateArea {
  byAccount: Map<string, PodcastEntry[]>;
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
  const byAccount = new Map<string, PodcastEntry[]>();
  return {
    name: NAME,
    byAccount,
    add(accountId, entry) {
      const list = byAccount.get(accountId) ?? [];
      list.push(entry);
      if (list.length > KEEP) list.shift();
      byAccount.set(accountId, list);
    },
    reset(accountId) {
      // Remove the listed files only: a podcast made right after the reset must survive.
      const dropped = accountId === undefined ? [...byAccount.values()].flat() : (byAccount.get(accountId) ?? []);
      if (accountId === undefined) byAccount.clear();
      else byAccount.delete(accountId);
      // Synchronous, so a link is dead as soon as the reset has answered.
      for (const e of dropped) rmSync(emu.blobs.file(e.objectKey), { force: true });
    },
    view: (accountId) => byAccount.get(accountId) ?? [],
    save: () => Object.fromEntries(byAccount),
    // Each listed podcast's audio is a stored file (kept until a reset): a start that does not find it stops, naming it.
    records: accountRecords(
      (accountId) => byAccount.get(accountId),
      (list) => (list as PodcastEntry[]).map((e) => e.objectKey),
    ),
    check: checkWith(
      z.record(
        z.string(),
        z.array(
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
      ),
    ),
    load(data) {
      byAccount.clear();
      for (const [id, list] of Object.entries((data ?? {}) as Record<string, PodcastEntry[]>)) byAccount.set(id, list);
    },
  };
}
