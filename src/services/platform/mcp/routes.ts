import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { StorageError } from '../../../core/state/storage.js';
import { attachAccount, pathOf, sendJson, takeFault } from '../../../core/http/request-context.js';
import { handleBody, parseBody, RPC_ERRORS, rpcFailure, UnparseableBody } from './jsonrpc.js';
import { dispatcher } from './model.js';
import { mcpTools } from './tools.js';

/**
 * `/mcp`: JSON-RPC 2.0 over plain HTTP POST, no login (the key travels in `arguments.apiKey`).
 * Requests get HTTP 200 with a JSON-RPC body (errors included); notifications get 202 and no body;
 * GET and DELETE get 405 with `Allow: POST` (this endpoint opens no server-sent stream and no session).
 */
export async function mcpRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  const tools = mcpTools(emu);

  // This plugin's own scope: any body is read as text and parsed here, so broken JSON answers -32700
  // in JSON-RPC shape instead of the platform envelope (curl -d sends a form content type: accept it too).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, parseBody(body as string)));

  // A Content-Type that lists several types ("application/json, text/plain", sent by some HTTP stacks) is read
  // by its first, as the JSON-RPC body is parsed here whatever the type says.
  app.addHook('onRequest', async (req) => {
    const type = req.headers['content-type'];
    if (type?.includes(',')) req.headers['content-type'] = type.slice(0, type.indexOf(',')).trim();
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
    if (req.method !== 'POST') return notAllowed(req, reply);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415)
      return sendJson(
        reply,
        200,
        rpcFailure(
          null,
          RPC_ERRORS.parse,
          `parse error: Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not a media type; send application/json`,
        ),
      );
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendJson(reply, 200, rpcFailure(null, RPC_ERRORS.invalidRequest, 'invalid request: the body exceeds the 1 MB limit'));
    if (err.statusCode === 400) return sendJson(reply, 200, rpcFailure(null, RPC_ERRORS.parse, `parse error: ${err.message}`));
    if (err instanceof StorageError) return sendJson(reply, 200, rpcFailure(null, RPC_ERRORS.internal, `internal error: ${err.message}`));
    emu.logger.error({ err, path: pathOf(req) }, '/mcp failed');
    return sendJson(reply, 200, rpcFailure(null, RPC_ERRORS.internal, 'internal error'));
  });

  app.post('/mcp', { config: { selfAuth: true } }, async (req, reply) => {
    const body = req.body === undefined ? new UnparseableBody('the request body is empty', 0) : req.body;
    const answer = await handleBody(
      body,
      dispatcher(emu, tools, {
        fault: (field) => takeFault(req, field),
        onAccount: (account) => attachAccount(req, account),
        logError: (err, what) => emu.logger.error({ err, path: '/mcp' }, `/mcp ${what} failed`),
      }),
    );
    if (answer === null) return reply.code(202).send();
    return sendJson(reply, 200, answer);
  });

  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: '/mcp', config: { selfAuth: true }, handler: notAllowed });
}

/** Every method but POST: 405 in JSON-RPC shape, whatever the request carried. */
async function notAllowed(_req: unknown, reply: FastifyReply) {
  return sendJson(
    reply.header('allow', 'POST'),
    405,
    rpcFailure(null, -32000, 'method not allowed: /mcp accepts POST only (no server-sent event stream, no session to delete)'),
  );
}
