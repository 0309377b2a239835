import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../core/emulator.js';

/** `POST /v1/t2a_v2` (built in its own issue). */
export async function speechRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
