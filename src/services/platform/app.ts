import multipart from '@fastify/multipart';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { installCors } from '../../core/http/cors.js';
import { MAX_FRAME_BYTES } from '../../core/socket/wire.js';
import { socketErrorHandler } from '../../core/socket/protocol.js';
import { registerDownloads } from '../../core/http/downloads.js';
import type { Emulator } from '../../core/emulator.js';
import type { BodyError } from '../../core/http/body-errors.js';
import { installErrorHandler } from '../../core/http/error-handler.js';
import { journalRefusedJson } from '../../core/http/json-body.js';
import { installLifecycle } from '../../core/http/lifecycle.js';
import { sendJson } from '../../core/http/request-context.js';
import { agentRoutes } from './agents/routes.js';
import { callRoutes } from './calls/routes.js';
import { conversationRoutes } from './conversation/routes.js';
import { detectionRoutes } from './detection/routes.js';
import { diarizationRoutes } from './diarization/routes.js';
import { failure, familyOf, PlatformError, sendPlatformError } from './envelope.js';
import { HEADER_KEY_TEXTS, refusalError } from './refusal.js';
import { fileRoutes } from './files/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { podcastRoutes } from './podcast/routes.js';
import { recognitionRoutes } from './recognition/routes.js';
import { roomRoutes } from './room/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { badJsonText } from './shared/json-body.js';
import { fieldRuleText } from './shared/validation.js';
import { SchemaRefusal } from '../../core/http/schema-validator.js';
import { ttsRoutes } from './tts/routes.js';
import { voiceRoutes } from './voices/routes.js';
import type { ServiceRegistration } from '../../core/service.js';
import { familyOfPath, httpStatusOfCode, MCP_PATHS } from './families.js';
import { platformFixtures } from './fixtures.js';

/** The presented platform key: `X-API-Key`, or `?api_key=` (WebSockets, browsers). */
export function platformKey(req: FastifyRequest): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const q = (req.query as Record<string, unknown> | undefined)?.api_key;
  return typeof q === 'string' ? q : undefined;
}

/** The platform's wording of a body the framework could not read. */
function bodyErrorText(req: FastifyRequest, err: BodyError): string {
  switch (err.kind) {
    case 'too_large':
      return 'request body exceeds the size limit';
    case 'media_type':
      return `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here`;
    case 'empty':
      return 'request body is empty';
    case 'bad_json':
      return badJsonText(err.detail);
  }
}

/**
 * Voice platform service on its Fastify app: CORS, the request lifecycle with the platform key and
 * refusals, the envelope, downloads and every area's routes. The composer (src/app.ts) adds the API
 * documents, the index and the control plane.
 */
export async function setupPlatformApp(app: FastifyInstance, emu: Emulator): Promise<void> {
  await installCors(app, emu.config.corsOrigins, (_req, reply, message) => sendJson(reply, 403, failure(10003, message)));
  installLifecycle(app, emu, {
    service: 'platform',
    keyOf: platformKey,
    refusal: (req, refusal) => refusalError(refusal, familyOf(req), HEADER_KEY_TEXTS),
  });

  installErrorHandler(app, emu, {
    service: 'platform',
    notFound: (_req, reply, message) => sendJson(reply, 404, failure(10002, message)),
    ownError: PlatformError,
    send: sendPlatformError,
    internal: (message = 'internal server error') => new PlatformError('internal', message),
    schemaError: (err) => (err instanceof SchemaRefusal ? new PlatformError('param', refusalText(err)) : undefined),
    bodyError: (req, err) => new PlatformError('param', bodyErrorText(req, err)),
  });
  // Fastify's JSON parser as before; a body it refuses is journaled as text (the answer is the same 10001).
  journalRefusedJson(app);

  await app.register(multipart, { limits: { fileSize: 256 * 1024 * 1024, files: 1, fields: 16 } });
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, errorHandler: socketErrorHandler });

  registerDownloads(app, emu, (reply, status, message) => sendJson(reply, status, failure(status === 403 ? 10003 : 10002, message)));

  for (const routes of [
    ttsRoutes,
    voiceRoutes,
    fileRoutes,
    podcastRoutes,
    recognitionRoutes,
    detectionRoutes,
    diarizationRoutes,
    callRoutes,
    sessionRoutes,
    conversationRoutes,
    agentRoutes,
    roomRoutes,
    mcpRoutes,
  ]) {
    await app.register(routes, { emu });
  }
}

/**
 * `field: rule` from a route's schema refusal; the rule alone when it names its field already. The field
 * is dotted, a key's own `/` read as a dot too (as the route validator has always named it).
 */
function refusalText(err: SchemaRefusal): string {
  const problem = err.problem;
  if (!problem) return err.message;
  return fieldRuleText(problem.path.join('/').replace(/\//g, '.'), problem.rule);
}

declare module '../../core/journal/entry.js' {
  interface Listeners {
    platform: true;
  }
}

declare module '../../core/state/account-settings.js' {
  /** What the platform's operations need of a key. */
  interface Capabilities {
    tts: true;
    cloning: true;
    upload: true;
    podcast: true;
    calls: true;
    recognition: true;
    detection: true;
    diarization: true;
    agents: true;
  }
}

/** The voice platform as the composer (src/app.ts) composes it. */
export const platformService: ServiceRegistration = {
  name: 'platform',
  // What the tapes (docs/tapes.md) need to know beyond the defaults: a call's nonce is new on every run; session ids
  // are made by the service, fresh on replay and mapped back when heartbeat, check or stop name them; a JSON-RPC
  // answer repeats the id its request gave, whatever the id was when it was recorded.
  tapes: {
    'POST /mcp': { echo: ['id'] },
    'POST /v1/audio/assistant/start': { ignore: ['client_nonce'], fresh: ['session_id'] },
    'POST /api/v1/agents/openapi/sessions/create': { fresh: ['sessionId'] },
  },
  listeners: [{ name: 'platform', port: (config) => config.platformPort }],
  // Fastify's own keep-alive default, which its server factory would have set.
  keepAliveTimeoutMs: 72_000,
  capabilities: ['tts', 'cloning', 'upload', 'podcast', 'calls', 'recognition', 'detection', 'diarization', 'agents'],
  fixtures: platformFixtures,
  // Before routing, the family comes from the path: voice endpoints answer HTTP 200 with the envelope (voice-platform
  // spec), the call family HTTP 200 with its own parameter code 20003, /mcp in JSON-RPC.
  badUrl: (_emu, message, url) => {
    if (url !== undefined && MCP_PATHS.test(url))
      return { status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `invalid request: ${message}` } } };
    const family = familyOfPath(url);
    const code = family.codes.param;
    return { status: family.httpStatuses ? httpStatusOfCode(code) : 200, body: failure(code, message) };
  },
  busy: (_emu, message) => ({ status: 503, body: failure(10000, message) }),
  setup: setupPlatformApp,
};
