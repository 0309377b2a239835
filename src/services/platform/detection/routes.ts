import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** AI-audio detection (built in its own issue). */
export async function detectionRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
