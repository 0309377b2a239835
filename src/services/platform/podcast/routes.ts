import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { ok } from '../envelope.js';
import { podcastStore } from './store.js';
import { generatePodcast, planPodcast } from './model.js';

/** `POST /v1/audio/podcast`: one synchronous request; envelope with HTTP 200 for every outcome. */
export async function podcastRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  podcastStore(emu); // registers the area, so reset, the state view and snapshots reach it
  app.post('/v1/audio/podcast', { config: { family: 'podcast', capability: 'podcast' } }, async (req) => {
    const plan = await planPodcast(emu, req.body ?? {});
    return ok(await generatePodcast(emu, req.emu.account!, plan));
  });
}
