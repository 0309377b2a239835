import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { installCors } from '../../core/cors.js';
import { MAX_FRAME_BYTES } from '../../core/wire.js';
import { registerDownloads } from '../../core/downloads.js';
import type { Emulator } from '../../core/emulator.js';
import { installPipeline, pathOf } from '../../core/http.js';
import { registerDocuments } from '../../control/documents.js';
import { registerRoot } from '../../control/pages.js';
import { controlPlane } from '../../control/routes.js';
import { classifyBodyError } from '../../core/body-errors.js';
import { bodyError, SpeechError, sendSpeechError } from './errors.js';
import { speechAsyncRoutes } from './async/routes.js';
import { speechCloneRoutes } from './clone/routes.js';
import { speechDesignRoutes } from './design/routes.js';
import { speechFileRoutes } from './files/routes.js';
import { gate, speechRoutes, T2A_PATH } from './routes.js';
import { speechVoiceRoutes } from './voices/routes.js';
import { speechSocketRoutes } from './ws/socket.js';
import { bidiSocketRoutes } from './bidi/socket.js';

/** Bearer key of the speech service (`Authorization: Bearer <key>`). */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(.*)$/i.exec(header.trim());
  return m ? m[1]!.trim() : undefined;
}

/** Speech synthesis service: the T2A operation, downloads and the control plane on one Fastify app. */
export async function setupSpeechApp(app: FastifyInstance, emu: Emulator): Promise<void> {
  await installCors(app, emu.config.corsOrigins, (req, reply, message) => sendSpeechError(emu, req, reply, new SpeechError(1004, message, 403)));
  installPipeline(app, emu, { service: 'speech', keyOf: (req) => bearerKey(req.headers.authorization) });

  const notFound = (req: FastifyRequest, reply: FastifyReply) =>
    sendSpeechError(emu, req, reply, new SpeechError(1000, `not found: no operation at ${req.method} ${req.url.split('?')[0]}`, 404));

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    // A body that failed to parse on an unknown route is still an unknown route: 404, not a body error.
    if (req.is404) return notFound(req, reply);
    if (err instanceof SpeechError) return sendSpeechError(emu, req, reply, err);
    const unreadable = classifyBodyError(err);
    if (unreadable) {
      // A body that cannot be read still meets the admission path first (the route's hook never ran).
      const refusal = req.emu && req.emu.route === T2A_PATH ? gate(emu, req) : null;
      return sendSpeechError(emu, req, reply, refusal ?? bodyError(unreadable));
    }
    emu.logger.error({ err, path: pathOf(req) }, 'speech handler failed');
    return sendSpeechError(emu, req, reply, new SpeechError(1000));
  });

  app.setNotFoundHandler(notFound);
  await registerDocuments(app, emu, 'speech');
  registerRoot(app, 'speech');

  registerDownloads(app, emu, (reply, status, message) =>
    sendSpeechError(emu, reply.request, reply, new SpeechError(status === 403 ? 1004 : 1000, message, status)),
  );
  // Frames over 8 MiB close the socket with 1009, as on the platform's sockets.
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
  await app.register(controlPlane, { prefix: '/_emulator', emu });
  await app.register(speechRoutes, { emu });
  await app.register(speechSocketRoutes, { emu });
  await app.register(bidiSocketRoutes, { emu });
  // Voices, files, cloning, design and async synthesis: each its own encapsulated plugin.
  for (const routes of [speechVoiceRoutes, speechFileRoutes, speechCloneRoutes, speechDesignRoutes, speechAsyncRoutes]) await app.register(routes, { emu });
}
