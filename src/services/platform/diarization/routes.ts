import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { ok } from '../envelope.js';
import { diarize } from './model.js';
import { diarizeBody } from './schema.js';

/** `POST /v1/diarize`: envelope, HTTP 200 for successes and errors (addendum B). */
export async function diarizationRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post('/v1/diarize', { config: { family: 'diarization', capability: 'diarization' }, schema: { body: diarizeBody } }, async (req) => {
    return ok(await diarize(emu, req.ctx.account!, req.body));
  });
}
