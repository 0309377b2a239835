/**
 * The tapes on the control plane (docs/tapes.md):
 * - `POST /_emulator/tapes/check` `{dir}`: every tape of a folder sent again to this emulator, answered by its own
 *   rules, and where its answers differ from the recorded ones (src/tapes/check/). An emulator that is recording or
 *   replaying would answer from the tapes or the upstream, not by its rules: it refuses.
 * - `GET|PUT|DELETE /_emulator/tapes/replay`: what is replayed, a folder to replay from now on (as `--replay`), no
 *   more replay. Refused while recording: the recording is the start's, and its folder is being written.
 * Only a folder of tapes is opened (every `*.json` in it carries the format's version field): never any folder the
 * server can read, and nothing of a file that is not a tape is repeated. The tapes' modules load only when a route
 * opens a folder.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';
import type { LoadedTapes, TapesSettings } from '../core/http/exchange.js';
import { ControlError, input } from './common.js';

const folderOfTapes = z.string().min(1, 'must name a folder of tapes');

export const tapesCheckBody = z.object({ dir: folderOfTapes }).strict();

export const tapesReplayBody = z
  .object({
    dir: folderOfTapes,
    strict: z.boolean().default(false),
    speed: z.number().min(0).max(1000).default(1),
  })
  .strict();

/** The tapes in effect, as `GET /_emulator/tapes/replay` tells them (mode null: none). */
export interface TapesView {
  mode: TapesSettings['mode'] | null;
  dir: string | null;
  strict: boolean;
  speed: number | null;
  /** How many tapes the folder holds. */
  tapes: number;
}

export function tapesView(loaded: LoadedTapes | null): TapesView {
  if (!loaded) return { mode: null, dir: null, strict: false, speed: null, tapes: 0 };
  const { mode, dir, strict, speed } = loaded.settings;
  return { mode, dir, strict, speed, tapes: loaded.tapeCount() };
}

/** A folder the control plane may open: a folder of tapes, or the reason (400) it is not one. */
async function openableFolder(dir: string, what: string): Promise<void> {
  const { notTapesFolder } = await import('../tapes/store.js');
  const notTapes = await notTapesFolder(dir);
  if (notTapes) throw new ControlError(400, `${what} field dir: ${notTapes}`);
}

/** A damaged tape (TapeError: its file and what is wrong) is the caller's 400; anything else stays a failure. */
async function damagedAs400<T>(what: string, open: () => Promise<T>): Promise<T> {
  const { TapeError } = await import('../tapes/format.js');
  try {
    return await open();
  } catch (err) {
    if (err instanceof TapeError) throw new ControlError(400, `${what} field dir: ${err.message}`);
    throw err;
  }
}

/** While recording, the replay routes are refused (409): the start's recording goes on. */
function refuseWhileRecording(emu: Emulator, doing: string): void {
  const settings = emu.tapes.current?.settings;
  if (settings && settings.mode !== 'replay')
    throw new ControlError(
      409,
      `${doing}: the emulator is recording (--record-mode ${settings.mode}) into ${settings.dir}; start one without --record to replay tapes`,
    );
}

export function tapesRoutes(app: FastifyInstance, emu: Emulator): void {
  // Checks running now: tapes loaded meanwhile would answer the check's requests in place of the emulator's rules.
  let checking = 0;
  app.post(
    '/tapes/check',
    {
      ...input({ body: true, what: 'tapes check' }),
      schema: {
        summary: 'Check the emulator against recorded tapes',
        description:
          "Body: {dir}, a folder of tapes (every .json file in it carries the format's version field, else 400). Sends every tape's request to this emulator (its own rules) and answers, per tape, where the answer differs from the recorded one: " +
          'status, spec code and message, JSON fields and their types, stream and socket event sequences, audio format, rate, channels and duration. ' +
          'Answer: {summary, tapes, differing, results: [{id, operation, differences: [{what, where?, recorded, emulator}]}]}.',
        body: tapesCheckBody,
      },
    },
    async (req) => {
      const { dir } = req.body as z.output<typeof tapesCheckBody>;
      if (emu.exchanges)
        throw new ControlError(409, "tapes check compares tapes with the emulator's own rules: start an emulator without --record or --replay to run it");
      const [{ TapeStore }, { checkTapes, summaryLine }] = await Promise.all([import('../tapes/store.js'), import('../tapes/check/run.js')]);
      // Only a folder of tapes is opened: the control plane never reads (nor repeats) files that are not tapes.
      await openableFolder(dir, 'tapes check');
      const store = await damagedAs400('tapes check', () => TapeStore.open(dir));
      checking++;
      try {
        const report = await checkTapes(store, { speechUrl: emu.urls.speech, platformUrl: emu.urls.platform });
        return { summary: summaryLine(report), ...report };
      } finally {
        checking--;
      }
    },
  );

  app.get(
    '/tapes/replay',
    {
      ...input({}),
      schema: {
        summary: 'The tapes in effect',
        description:
          'Answer: {mode, dir, strict, speed, tapes}: mode is replay, record or record-missing while tapes are in effect (at start or loaded here), else null; tapes is how many the folder holds.',
      },
    },
    async () => tapesView(emu.tapes.current),
  );

  app.put(
    '/tapes/replay',
    {
      ...input({ body: true, what: 'tapes replay' }),
      schema: {
        summary: 'Replay a folder of tapes from now on',
        description:
          "Body: {dir, strict?, speed?}, as --replay, --replay-strict and --replay-speed: a folder of tapes (every .json file in it carries the format's version field, else 400; a damaged tape is named with its file and what is wrong, 400). " +
          'Requests that arrive after the answer (HTTP and sockets, every listener) are answered from these tapes; a folder replayed before is replaced. Refused while recording, and while a tapes check runs (409). Answer: the tapes in effect, as GET.',
        body: tapesReplayBody,
      },
    },
    async (req) => {
      const { dir, strict, speed } = req.body as z.output<typeof tapesReplayBody>;
      refuseWhileRecording(emu, 'tapes replay');
      if (checking)
        throw new ControlError(
          409,
          "tapes replay: a tapes check is running, and its requests must be answered by the emulator's own rules; load tapes once it has answered",
        );
      await openableFolder(dir, 'tapes replay');
      const loaded = await damagedAs400('tapes replay', () => emu.tapes.load({ mode: 'replay', dir, strict, speed }));
      return tapesView(loaded);
    },
  );

  app.delete(
    '/tapes/replay',
    {
      ...input({}),
      schema: {
        summary: 'Stop replaying tapes',
        description:
          "Requests that arrive after the answer get the emulator's own answers again; the folder keeps the ids of the tapes used (.used.json, read by tapes prune). Refused while recording (409). Answer: the tapes in effect (none), as GET.",
      },
    },
    async () => {
      refuseWhileRecording(emu, 'tapes replay');
      await emu.tapes.unload();
      return tapesView(emu.tapes.current);
    },
  );
}
