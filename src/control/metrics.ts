import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';

/** `GET /_emulator/metrics`: Prometheus text format of this emulator's own registry (core/http/metrics.ts). */
export function metricsRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get('/metrics', { config: { control: {} }, schema: { querystring: z.object({}).strict() } }, async (_req, reply) => {
    const text = await emu.metrics.text();
    return reply.code(200).header('content-type', emu.metrics.contentType).send(text);
  });
}
