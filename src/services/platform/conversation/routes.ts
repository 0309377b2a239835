/**
 * The conversation WebSockets' routes. Each request is admitted once (core/http/admission.ts
 * `admitUpgrade`): an upgrade's refusals are spoken on the socket (socket.ts); a plain GET, having no
 * socket, gets its refusal in the call family's envelope, and once let in the 426.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitUpgrade } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { sendJson } from '../../../core/http/request-context.js';
import { failure } from '../envelope.js';
import { FAMILIES } from '../families.js';
import { refusalError } from '../refusal.js';
import { conversationArea } from './model.js';
import { SOCKET_KEY_TEXTS, streamMetaSchema, textMetaSchema } from './schema.js';
import { conversationSocket } from './socket.js';

export const STREAM_PATH = '/api/v1/audio/conversation/stream';
export const STREAM_TEXT_PATH = '/api/v1/audio/conversation/stream-text';

export async function conversationRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const { emu } = opts;
  const state = conversationArea(emu);

  // A plain GET (no Upgrade) that admission lets in gets the group's parameter error with HTTP 426.
  const notUpgraded = (req: FastifyRequest, reply: FastifyReply) =>
    sendJson(reply, 426, failure(20003, `${req.url.split('?')[0]} is a WebSocket endpoint: connect with an Upgrade request`));

  for (const [url, mode, meta] of [
    [STREAM_PATH, 'stream', streamMetaSchema],
    [STREAM_TEXT_PATH, 'text', textMetaSchema],
  ] as const) {
    app.route({
      method: 'GET',
      url,
      config: { family: 'call', selfAuth: true, messages: { meta } },
      preValidation: async (req: FastifyRequest) => {
        const admission = admitUpgrade(emu, req, 'calls');
        if (!admission.ok && !req.ws) throw refusalError(admission.refusal, FAMILIES.call, SOCKET_KEY_TEXTS);
      },
      handler: notUpgraded,
      wsHandler: (socket, req) => conversationSocket(emu, state, socket, req, mode),
    });
  }
}
