import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { ok } from '../envelope.js';
import { diarize, type DiarizeInput } from './model.js';

/** `POST /v1/diarize`: envelope, HTTP 200 for successes and errors (addendum B). */
export async function diarizationRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  app.post('/v1/diarize', { config: { family: 'diarization', capability: 'diarization' } }, async (req) => {
    const data = await diarize(emu, req.emu.account!, (req.body ?? {}) as DiarizeInput);
    return ok(data);
  });
}
