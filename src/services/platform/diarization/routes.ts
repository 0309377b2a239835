import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Speaker diarization (built in its own issue). */
export async function diarizationRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
