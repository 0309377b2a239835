import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Agent sessions (built in its own issue). */
export async function agentRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
