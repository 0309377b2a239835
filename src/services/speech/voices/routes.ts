import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { parseWith } from '../body.js';
import { sendOk, speechOperations } from '../reply.js';
import { deleteVoice } from './delete.js';
import { listVoices } from './model.js';
import { deleteVoiceBody, getVoiceBody } from './schema.js';
import { voiceStore } from './store.js';

/** `POST /v1/get_voice` and `POST /v1/delete_voice`. */
export async function speechVoiceRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  voiceStore(emu);
  speechOperations(app, emu, 'tts');
  app.withTypeProvider<ZodTypeProvider>().post('/v1/get_voice', { schema: { body: getVoiceBody } }, async (req, reply) => {
    const { voice_type } = parseWith(getVoiceBody, req.body);
    return sendOk(emu, req, reply, listVoices(emu, req.ctx.account!, voice_type));
  });
  app.withTypeProvider<ZodTypeProvider>().post('/v1/delete_voice', { schema: { body: deleteVoiceBody } }, async (req, reply) => {
    const body = parseWith(deleteVoiceBody, req.body);
    return sendOk(emu, req, reply, deleteVoice(emu, req.ctx.account!, body));
  });
}
