import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Speech recognition (built in its own issue). */
export async function recognitionRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
