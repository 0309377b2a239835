import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { ok } from '../envelope.js';
import { generatePodcast, planPodcast } from './model.js';
import { podcastBody } from './schema.js';
import { podcastStore } from './store.js';

/** `POST /v1/audio/podcast`: one synchronous request; envelope with HTTP 200 for every outcome. */
export async function podcastRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  podcastStore(emu); // registers the area, so reset, the state view and snapshots reach it
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post('/v1/audio/podcast', { config: { family: 'podcast', capability: 'podcast' }, schema: { body: podcastBody } }, async (req) => {
    const plan = await planPodcast(emu, req.body);
    return ok(await generatePodcast(emu, req.ctx.account!, plan));
  });
}
