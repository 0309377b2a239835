import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';
import { input } from './common.js';

/** `GET|POST /_emulator/clock`: read, freeze, set and advance the emulator clock. */
export const clockBody = z
  .object({
    advance_ms: z.number().int().min(0).optional(),
    freeze: z.boolean().optional(),
    set_ms: z.number().int().min(0).optional(),
  })
  .strict();

export function clockRoutes(app: FastifyInstance, emu: Emulator): void {
  const clockView = () => ({ now_ms: emu.clock.now(), frozen: emu.clock.frozen });
  app.get('/clock', input({}), async () => clockView());
  app.post('/clock', { ...input({ body: true, what: 'clock' }), schema: { body: clockBody } }, async (req) => {
    const body = req.body as z.output<typeof clockBody>;
    if (body.freeze === true) emu.clock.freeze(true);
    if (body.set_ms !== undefined) emu.clock.set(body.set_ms);
    if (body.advance_ms !== undefined) emu.clock.advance(body.advance_ms);
    if (body.freeze === false) emu.clock.freeze(false);
    emu.markDirty();
    return clockView();
  });
}
