import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';

/** The JSON-RPC tool endpoint /mcp (built in its own issue). */
export async function mcpRoutes(_app: FastifyInstance, _opts: { emu: Emulator }): Promise<void> {}
