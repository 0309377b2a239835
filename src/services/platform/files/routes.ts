import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** File upload (built in its own issue). */
export async function fileRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
