import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Synthesis (built in its own issue). */
export async function ttsRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
