import multipart from '@fastify/multipart';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { controlPlane } from '../../control/routes.js';
import { registerDownloads } from '../../core/downloads.js';
import type { Emulator } from '../../core/emulator.js';
import { installPipeline, pathOf, sendJson, takeFault } from '../../core/http.js';
import { agentRoutes } from './agents/routes.js';
import { callRoutes } from './calls/routes.js';
import { conversationRoutes } from './conversation/routes.js';
import { detectionRoutes } from './detection/routes.js';
import { diarizationRoutes } from './diarization/routes.js';
import { failure, familyOf, PlatformError, sendPlatformError } from './envelope.js';
import { codeOfHttpStatus } from './families.js';
import { fileRoutes } from './files/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { podcastRoutes } from './podcast/routes.js';
import { recognitionRoutes } from './recognition/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { issueText } from './shared/validation.js';
import { ttsRoutes } from './tts/routes.js';
import { voiceRoutes } from './voices/routes.js';

/** The presented platform key: `X-API-Key`, or `?api_key=` (WebSockets, browsers). */
export function platformKey(req: FastifyRequest): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const q = (req.query as Record<string, unknown> | undefined)?.api_key;
  return typeof q === 'string' ? q : undefined;
}

const AUTH_TEXT = {
  missing: 'X-API-Key header is missing',
  invalid: 'X-API-Key is not a valid API key',
  disabled: 'X-API-Key belongs to a disabled API key',
} as const;

/** Voice platform service: every area's routes, downloads and the control plane on one Fastify app. */
export async function setupPlatformApp(app: FastifyInstance, emu: Emulator): Promise<void> {
  installPipeline(app, emu, { service: 'platform', keyOf: platformKey });

  // Order of checks (design.md): fault directive, key, capability; then body validation in the route.
  app.addHook('preValidation', async (req) => {
    const config = req.routeOptions?.config;
    if (!config?.family || config.selfAuth) return;
    const family = familyOf(req);
    const code = takeFault(req, 'code');
    if (code !== undefined) throw new PlatformError(code, `injected fault: error ${code}`);
    const status = takeFault(req, 'status');
    if (status !== undefined) throw new PlatformError(codeOfHttpStatus(family, status), `injected fault: HTTP ${status}`, status);
    if (!req.emu.account) throw new PlatformError('auth', AUTH_TEXT[req.emu.accountProblem ?? 'missing']);
    if (config.capability && !emu.accounts.has(req.emu.account, config.capability)) {
      throw new PlatformError(family.codes.forbidden ? 'forbidden' : 'auth', `this API key lacks the ${config.capability} capability`);
    }
  });

  const notFound = (req: FastifyRequest, reply: FastifyReply) =>
    sendJson(reply, 404, failure(10002, `not found: no operation at ${req.method} ${req.url.split('?')[0]}`));

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string; validation?: unknown }, req, reply) => {
    // A body that failed to parse on an unknown route is still an unknown route: 404, not a body error.
    if (req.is404) return notFound(req, reply);
    if (err instanceof PlatformError) return sendPlatformError(req, reply, err);
    if (err.validation) return sendPlatformError(req, reply, new PlatformError('param', validationText(err)));
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendPlatformError(req, reply, new PlatformError('param', 'request body exceeds the size limit'));
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendPlatformError(req, reply, new PlatformError('param', `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here`));
    if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return sendPlatformError(req, reply, new PlatformError('param', 'request body is empty'));
    if (err.statusCode === 400) return sendPlatformError(req, reply, new PlatformError('param', `request body is not valid JSON (${err.message})`));
    emu.logger.error({ err, path: pathOf(req) }, 'platform handler failed');
    return sendPlatformError(req, reply, new PlatformError('internal', 'internal server error'));
  });

  app.setNotFoundHandler(notFound);

  await app.register(multipart, { limits: { fileSize: 256 * 1024 * 1024, files: 1, fields: 16 } });
  await app.register(websocket, { options: { maxPayload: 8 * 1024 * 1024 } });

  registerDownloads(app, emu, (reply, status, message) => sendJson(reply, status, failure(status === 403 ? 10003 : 10002, message)));
  await app.register(controlPlane, { prefix: '/_emulator', emu });

  for (const routes of [ttsRoutes, voiceRoutes, fileRoutes, podcastRoutes, recognitionRoutes, detectionRoutes, diarizationRoutes, callRoutes, sessionRoutes, conversationRoutes, agentRoutes, mcpRoutes]) {
    await app.register(routes, { emu });
  }
}

/** `field: rule` from a schema validation error. */
function validationText(err: Error & { validation?: unknown }): string {
  const items = Array.isArray(err.validation) ? (err.validation as { instancePath?: string; message?: string }[]) : [];
  const first = items[0];
  if (!first) return err.message;
  const field = (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  return issueText(field, first.message ?? err.message);
}
