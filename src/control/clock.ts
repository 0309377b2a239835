import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';
import { CLOCK_MAX_MS } from '../core/state/clock.js';
import { ControlError, input } from './common.js';

/** `GET|POST /_emulator/clock`: read, freeze, set and advance the emulator clock. */
export const clockBody = z
  .object({
    advance_ms: z.number().int().min(0).max(CLOCK_MAX_MS).optional(),
    freeze: z.boolean().optional(),
    set_ms: z.number().int().min(0).max(CLOCK_MAX_MS).optional(),
  })
  .strict();

export function clockRoutes(app: FastifyInstance, emu: Emulator): void {
  const clockView = () => ({ now_ms: emu.clock.now(), frozen: emu.clock.frozen });
  app.get('/clock', input({}), async () => clockView());
  app.post('/clock', { ...input({ body: true, what: 'clock' }), schema: { body: clockBody } }, async (req) => {
    const body = req.body as z.output<typeof clockBody>;
    const base = body.set_ms ?? emu.clock.now();
    if (body.advance_ms !== undefined && base + body.advance_ms > CLOCK_MAX_MS)
      throw new ControlError(400, `clock field advance_ms: would move the clock past ${CLOCK_MAX_MS} (the latest date); at most ${CLOCK_MAX_MS - base}`);
    if (body.freeze === true) emu.clock.freeze(true);
    if (body.set_ms !== undefined) emu.clock.set(body.set_ms);
    if (body.advance_ms !== undefined) emu.clock.advance(body.advance_ms);
    if (body.freeze === false) emu.clock.freeze(false);
    // Work whose outcome depends on the new time (async tasks' audio) has happened when this is answered.
    if (body.set_ms !== undefined || body.advance_ms !== undefined) await emu.clock.settled();
    emu.markDirty('clock');
    return clockView();
  });
}
