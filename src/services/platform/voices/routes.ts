import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Voice cloning (built in its own issue). */
export async function voiceRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
