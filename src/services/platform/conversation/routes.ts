import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** Conversation WebSockets (built in its own issue). */
export async function conversationRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
