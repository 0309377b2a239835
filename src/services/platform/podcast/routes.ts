import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Podcast generation (built in its own issue). */
export async function podcastRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
