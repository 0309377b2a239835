import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Real-time call sessions (built in its own issue). */
export async function callRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
