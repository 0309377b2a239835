/**
 * `POST /_emulator/tapes/check` `{dir}`: every tape of a folder sent again to this emulator, answered by its own
 * rules, and where its answers differ from the recorded ones (src/tapes/check/, docs/tapes.md). An emulator that is
 * recording or replaying would answer from the tapes or the upstream, not by its rules: it refuses. Only a folder of
 * tapes is opened (every `*.json` in it carries the format's version field): never any folder the server can read.
 * The tapes are loaded only when the route runs.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';
import { ControlError, input } from './common.js';

export const tapesCheckBody = z.object({ dir: z.string().min(1, 'must name a folder of tapes') }).strict();

export function tapesRoutes(app: FastifyInstance, emu: Emulator): void {
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
      const [{ TapeStore, notTapesFolder }, { TapeError }, { checkTapes, summaryLine }] = await Promise.all([
        import('../tapes/store.js'),
        import('../tapes/format.js'),
        import('../tapes/check/run.js'),
      ]);
      // Only a folder of tapes is opened: the control plane never reads (nor repeats) files that are not tapes.
      const notTapes = await notTapesFolder(dir);
      if (notTapes) throw new ControlError(400, `tapes check field dir: ${notTapes}`);
      let store;
      try {
        store = await TapeStore.open(dir);
      } catch (err) {
        if (err instanceof TapeError) throw new ControlError(400, `tapes check field dir: ${err.message}`);
        throw err;
      }
      const report = await checkTapes(store, { speechUrl: emu.urls.speech, platformUrl: emu.urls.platform });
      return { summary: summaryLine(report), ...report };
    },
  );
}
