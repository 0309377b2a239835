/** Voice cloning: save, list, delete. Always HTTP 200; success text `success`. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { registerCustomVoices } from '../../shared/custom-voices.js';
import { ok, PlatformError } from '../envelope.js';
import { deleteVoice, listVoices, saveVoice } from './model.js';
import { voiceDeleteParamsSchema, voiceListQuerySchema, voiceSaveSchema } from './schema.js';

const config = { family: 'voice', capability: 'cloning' } as const;

export async function voiceRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  registerCustomVoices(emu); // at start, so a data dir snapshot restores the voices
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/voice/save', { config, schema: { body: voiceSaveSchema } }, async (req) => ok(await saveVoice(emu, req.ctx.account!, req.body), 'success'));

  r.get('/v1/voice/list', { config, schema: { querystring: voiceListQuerySchema } }, async (req) =>
    ok(listVoices(emu, req.ctx.account!, req.query), 'success'),
  );

  // `DELETE /v1/voice/` (no id) is this endpoint with a missing parameter, not an unknown route.
  app.delete('/v1/voice', { config, schema: { hide: true } }, async () => {
    throw new PlatformError('param', 'voice_id is required in the path: DELETE /v1/voice/{voice_id}');
  });

  r.delete('/v1/voice/:voice_id', { config, schema: { params: voiceDeleteParamsSchema } }, async (req) =>
    ok(await deleteVoice(emu, req.ctx.account!, req.params.voice_id), 'success'),
  );
}
