/**
 * Probes: `/health` (status, version; the service URLs only to a caller with the control token),
 * `/livez` (the process answers) and `/readyz` (503 while starting or closing). No token needed.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Emulator } from '../core/emulator.js';
import { VERSION } from '../version.js';
import { authorized } from './common.js';

const probe = { config: { control: { public: true } }, schema: { querystring: z.object({}).strict() } };

export function healthRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get('/health', probe, async (req) => ({
    status: 'ok',
    version: VERSION,
    ready: emu.phase === 'ready',
    ...(authorized(emu, req) ? { services: { speech: emu.urls.speech, speech_backup: emu.urls.speechBackup, platform: emu.urls.platform } } : {}),
  }));
  app.get('/livez', probe, async () => ({ status: 'ok', version: VERSION }));
  app.get('/readyz', probe, async (_req, reply) => {
    const ready = emu.phase === 'ready';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : emu.phase, version: VERSION });
  });
}
