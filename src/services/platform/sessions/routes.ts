import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { ok, PlatformError } from '../envelope.js';
import { acceptPlatformJson } from '../shared/json-body.js';
import { roles } from '../shared/roles.js';
import { createSession, deleteSession, registerSessions } from './model.js';
import { createBody, deleteParams, type Character, type SessionData } from './schema.js';

/** REST conversation sessions and the characters (roles) list; same error family as the calls. */
export async function sessionRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  registerSessions(emu);
  acceptPlatformJson(app);
  const r = app.withTypeProvider<ZodTypeProvider>();
  const config = { family: 'call', capability: 'calls' } as const;

  r.post('/api/v1/audio/sessions', { config, schema: { body: createBody } }, async (req) => {
    const s = createSession(emu, req.ctx.account!, req.body.voice_id);
    return ok<SessionData>({ session_id: s.sessionId, voice_id: s.voiceId, created_at: Math.floor(s.createdAtMs / 1000) });
  });

  // An empty id (`…/sessions/` or `…/sessions/.`, which clients normalise to it) is a parameter error in the envelope.
  app.delete('/api/v1/audio/sessions', { config, schema: { hide: true } }, async () => {
    throw new PlatformError('param', 'session_id is required in the path: DELETE /api/v1/audio/sessions/{session_id}');
  });

  r.delete('/api/v1/audio/sessions/:session_id', { config, schema: { params: deleteParams } }, async (req) => {
    return ok({ deleted: deleteSession(emu, req.ctx.account!.id, req.params.session_id) });
  });

  r.get('/api/v1/audio/characters', { config }, async () => {
    const characters: Character[] = roles(emu).map(({ id, name, language, description }) => ({ id, name, language, description }));
    return ok({ characters });
  });
}
