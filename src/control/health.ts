/**
 * Probes: `/health` (status, version; the service URLs only to a caller with the control token),
 * `/livez` (the process answers, whatever the disk) and `/readyz` (503 while starting or closing, and
 * while the data dir refuses writes). No token needed.
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
    ready: emu.phase === 'ready' && emu.storageFailing === null,
    ...(emu.storageFailing ? { storage: { ok: false, problem: emu.storageFailing } } : {}),
    ...(authorized(emu, req) ? { services: { speech: emu.urls.speech, speech_backup: emu.urls.speechBackup, platform: emu.urls.platform } } : {}),
  }));
  app.get('/livez', probe, async () => ({ status: 'ok', version: VERSION }));
  // Not ready while the data dir refuses writes (a full disk): every write would be refused. Live all the same.
  app.get('/readyz', probe, async (_req, reply) => {
    const failing = emu.storageFailing;
    const ready = emu.phase === 'ready' && failing === null;
    if (ready) return reply.code(200).send({ status: 'ready', version: VERSION });
    if (emu.phase === 'ready') return reply.code(503).send({ status: 'storage_failing', problem: failing, version: VERSION });
    return reply.code(503).send({ status: emu.phase, version: VERSION });
  });
}
