import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { parseWith, sendOk, speechOperations } from '../reply.js';
import { designVoice } from './model.js';
import { designBody } from './schema.js';

/** `POST /v1/voice_design`. */
export async function speechDesignRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  speechOperations(app, emu, 'tts');
  app.withTypeProvider<ZodTypeProvider>().post('/v1/voice_design', { schema: { body: designBody } }, async (req, reply) => {
    return sendOk(emu, req, reply, await designVoice(emu, req.emu.account!, parseWith(designBody, req.body)));
  });
}
