import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { URL_TTL_MS } from '../model.js';
import { parseWith } from '../body.js';
import { sendOk, signedLink, speechOperations } from '../reply.js';
import { cloneResponse, cloneVoice } from './model.js';
import { cloneBody } from './schema.js';

/** `POST /v1/voice_clone`. */
export async function speechCloneRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  speechOperations(app, emu, 'cloning');
  app.withTypeProvider<ZodTypeProvider>().post('/v1/voice_clone', { schema: { body: cloneBody } }, async (req, reply) => {
    const result = await cloneVoice(emu, req.ctx.account!, parseWith(cloneBody, req.body));
    const demoUrl = result.demoBlob ? signedLink(emu, req, result.demoBlob, emu.clock.now() + URL_TTL_MS) : '';
    return sendOk(emu, req, reply, cloneResponse(result, demoUrl));
  });
}
