import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

export async function speechAsyncRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
