import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { installCors } from '../../core/http/cors.js';
import { MAX_FRAME_BYTES } from '../../core/socket/wire.js';
import { socketErrorHandler } from '../../core/socket/protocol.js';
import { registerDownloads } from '../../core/http/downloads.js';
import type { Emulator } from '../../core/emulator.js';
import { installLifecycle } from '../../core/http/lifecycle.js';
import { journalRefusedJson } from '../../core/http/json-body.js';
import { installErrorHandler } from '../../core/http/error-handler.js';
import { bodyError, refusalError, REQUEST_ID_HEADER, SpeechError, sendSpeechError } from './errors.js';
import { notFoundMessage } from './legacy.js';
import { speechAsyncRoutes } from './async/routes.js';
import { speechCloneRoutes } from './clone/routes.js';
import { speechDesignRoutes } from './design/routes.js';
import { speechFileRoutes } from './files/routes.js';
import { speechRoutes } from './routes.js';
import { speechVoiceRoutes } from './voices/routes.js';
import { speechToTextRoutes } from './stt/routes.js';
import type { ServiceRegistration } from '../../core/service.js';
import { bidiSettingsSchema, sttSettingsSchema } from './account-settings.js';
import { speechFixtures } from './fixtures.js';
import { speechSocketRoutes } from './ws/socket.js';
import { bidiSocketRoutes } from './bidi/socket.js';

/** Bearer key of the speech service (`Authorization: Bearer <key>`). */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(.*)$/i.exec(header.trim());
  return m ? m[1]!.trim() : undefined;
}

/**
 * Speech synthesis service on its Fastify app: CORS, the request lifecycle with the speech key and
 * refusals, the error shape, downloads and the operations. The composer (src/app.ts) adds the API
 * documents, the index and the control plane.
 */
export async function setupSpeechApp(app: FastifyInstance, emu: Emulator): Promise<void> {
  await installCors(app, emu.config.corsOrigins, (req, reply, message) => sendSpeechError(emu, req, reply, new SpeechError(1004, message, 403)));
  installLifecycle(app, emu, {
    service: 'speech',
    keyOf: (req) => bearerKey(req.headers.authorization),
    refusal: (_req, refusal) => refusalError(refusal),
  });

  installErrorHandler(app, emu, {
    service: 'speech',
    notFound: (req, reply, message) => sendSpeechError(emu, req, reply, new SpeechError(1000, notFoundMessage(req.url.split('?')[0]!, message), 404)),
    ownError: SpeechError,
    send: (req, reply, err) => sendSpeechError(emu, req, reply, err),
    internal: (message) => new SpeechError(1000, message),
    bodyError: (_req, err) => bodyError(err),
  });
  // Every answer with a trace id carries it as the request id too (streams set it before their head).
  app.addHook('onSend', async (_req, reply, payload) => {
    const traceId = reply.getHeader('trace-id');
    if (traceId !== undefined && !reply.hasHeader(REQUEST_ID_HEADER)) reply.header(REQUEST_ID_HEADER, traceId);
    return payload;
  });
  // Fastify's JSON parser as before; a body it refuses is journaled as text (the answer is the same 2013).
  // Numbers written with a fraction are noted: an integer field refuses them (speech/body.ts).
  journalRefusedJson(app, { decimalLiterals: true });

  registerDownloads(app, emu, (reply, status, message) =>
    sendSpeechError(emu, reply.request, reply, new SpeechError(status === 403 ? 1004 : 1000, message, status)),
  );
  // Frames over 8 MiB close the socket with 1009, as on the platform's sockets.
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, errorHandler: socketErrorHandler });
  await app.register(speechRoutes, { emu });
  await app.register(speechSocketRoutes, { emu });
  await app.register(bidiSocketRoutes, { emu });
  // Voices, files, cloning, design and async synthesis: each its own encapsulated plugin.
  for (const routes of [speechVoiceRoutes, speechFileRoutes, speechCloneRoutes, speechDesignRoutes, speechAsyncRoutes]) await app.register(routes, { emu });
  await app.register(speechToTextRoutes, { emu });
}

declare module '../../core/journal/entry.js' {
  interface Listeners {
    speech: true;
    'speech-backup': true;
  }
}

declare module '../../core/state/account-settings.js' {
  /** What the speech operations need of a key (speech synthesis and its sockets, voice cloning). */
  interface Capabilities {
    tts: true;
    cloning: true;
  }
}

/** The speech service as the composer (src/app.ts) composes it. */
export const speechService: ServiceRegistration = {
  name: 'speech',
  // What the tapes (docs/tapes.md) need to know beyond the defaults (`trace_id` fresh on every answer; `file_id` and
  // `task_id` fresh and mapped back): an async task's id and its file's, under the names its answers give them.
  tapes: {
    'POST /v1/t2a_async_v2': { fresh: ['task_id', 'file_id'] },
    'GET /v1/query/t2a_async_query_v2': { fresh: ['task_id', 'file_id'] },
  },
  // The backup base URL is a second listener in front of the same operations.
  listeners: [
    { name: 'speech', port: (config) => config.speechPort },
    { name: 'speech-backup', port: (config) => config.speechBackupPort },
  ],
  capabilities: ['tts', 'cloning'],
  accountSettings: { bidi: bidiSettingsSchema.optional(), stt: sttSettingsSchema.optional() },
  fixtures: speechFixtures,
  badUrl: (emu, message) => {
    const traceId = emu.ids.traceId();
    return {
      status: 400,
      headers: { 'Trace-Id': traceId, [REQUEST_ID_HEADER]: traceId },
      body: { data: null, trace_id: traceId, base_resp: { status_code: 2013, status_msg: `invalid params, ${message}` } },
    };
  },
  busy: (emu, message) => {
    const traceId = emu.ids.traceId();
    return {
      status: 503,
      headers: { 'Trace-Id': traceId, [REQUEST_ID_HEADER]: traceId },
      body: { data: null, trace_id: traceId, base_resp: { status_code: 1000, status_msg: message } },
    };
  },
  setup: setupSpeechApp,
};
