import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { parseWith } from '../body.js';
import { sendOk, speechOperations } from '../reply.js';
import { designVoice } from './model.js';
import { designBody } from './schema.js';

/** `POST /v1/voice_design`. */
export async function speechDesignRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  speechOperations(app, emu, 'tts');
  app.withTypeProvider<ZodTypeProvider>().post('/v1/voice_design', { schema: { body: designBody } }, async (req, reply) => {
    const designed = await designVoice(emu, req.ctx.account!, parseWith(designBody, req.body));
    // The trial is MP3, 32 kHz mono (rule 12.11): kept so the inspector can play it.
    const trial = Buffer.from(designed.trial_audio, 'hex');
    emu.journal.keepAnswerAudio(req.ctx.entry, { bytes: trial, size: trial.length, format: 'mp3', sampleRate: 32000, channels: 1 });
    return sendOk(emu, req, reply, designed);
  });
}
