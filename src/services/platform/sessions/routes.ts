import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** REST conversation sessions and characters (built in its own issue). */
export async function sessionRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
