import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { ok, PlatformError } from '../envelope.js';
import { deleteVoice, listVoices, saveVoice } from './model.js';
import { voiceArea } from './store.js';

/** Voice cloning: save, list, delete. Always HTTP 200; success text `success`. */
const config = { family: 'voice', capability: 'cloning' } as const;

export async function voiceRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  voiceArea(emu); // registered at start so a data dir snapshot restores it

  app.post('/v1/voice/save', { config }, async (req) => ok(await saveVoice(emu, req.emu.account!, req.body), 'success'));

  app.get('/v1/voice/list', { config }, async (req) => ok(listVoices(emu, req.emu.account!, req.query as { voice_id?: string; page_size?: string }), 'success'));

  // `DELETE /v1/voice/` (no id) is this endpoint with a missing parameter, not an unknown route.
  app.delete('/v1/voice', { config }, async () => {
    throw new PlatformError('param', 'voice_id is required in the path: DELETE /v1/voice/{voice_id}');
  });

  app.delete('/v1/voice/:voice_id', { config }, async (req) =>
    ok(await deleteVoice(emu, req.emu.account!, (req.params as { voice_id: string }).voice_id), 'success'),
  );
}
