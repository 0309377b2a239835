/**
 * The room server on the platform listener, at LiveKit's paths: `GET /rtc` (the signalling WebSocket of
 * LiveKit's dual peer-connection protocol) and `GET /rtc/validate` (why a join was refused, in LiveKit's
 * words). `/rtc/v1` (LiveKit's single peer-connection protocol) answers 404, as a server without it does:
 * LiveKit's clients then use `/rtc`. The signalling and WebRTC code loads on the first join.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Emulator } from '../../../core/emulator.js';
import { checkJoin, type JoinCheck } from './tokens.js';

export const RTC_PATH = '/rtc';

const refused = (reply: FastifyReply, check: Extract<JoinCheck, { ok: false }>) =>
  reply.code(check.status).header('content-type', 'text/plain; charset=utf-8').send(check.text);

const checks = new WeakMap<FastifyRequest, Extract<JoinCheck, { ok: true }>>();

export async function roomRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const { emu } = opts;
  const config = { family: 'call', selfAuth: true } as const;

  app.get(`${RTC_PATH}/validate`, { config }, async (req, reply) => {
    const check = await checkJoin(emu, req);
    if (!check.ok) return refused(reply, check);
    return reply.header('content-type', 'text/plain; charset=utf-8').send('success');
  });

  // Not served: an upgrade gets the HTTP 404 itself (clients fall back to /rtc on exactly that).
  const notFound = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('404 page not found\n');
  for (const path of [`${RTC_PATH}/v1`, `${RTC_PATH}/v1/validate`]) {
    app.route({
      method: 'GET',
      url: path,
      config,
      preValidation: notFound,
      handler: notFound,
      wsHandler: (socket: WebSocket) => socket.close(1011, 'not served'),
    });
  }

  app.route({
    method: 'GET',
    url: RTC_PATH,
    config,
    // The token is checked before the upgrade: a refusal is LiveKit's HTTP status and text, no socket.
    preValidation: async (req: FastifyRequest, reply: FastifyReply) => {
      const check = await checkJoin(emu, req);
      if (!check.ok) return refused(reply, check);
      const account = emu.accounts.byId(check.host.accountId);
      if (account) {
        req.ctx.account = account;
        req.ctx.entry?.setAccount(account.label, account.id);
      }
      checks.set(req, check);
    },
    handler: async (_req, reply) => reply.code(400).header('content-type', 'text/plain; charset=utf-8').send('Bad Request: expected a WebSocket upgrade\n'),
    wsHandler: (socket: WebSocket, req: FastifyRequest) => {
      const check = checks.get(req);
      if (!check) return socket.close(1011, 'join not checked');
      // Frames that arrive while the room code loads wait for it, in order.
      const early: [RawData, boolean][] = [];
      const hold = (data: RawData, isBinary: boolean) => void early.push([data, isBinary]);
      socket.on('message', hold);
      void import('./registry.js').then(
        ({ joinRoom }) => {
          socket.off('message', hold);
          if (socket.readyState !== socket.OPEN) return;
          joinRoom(emu, socket, req, check);
          for (const [data, isBinary] of early) socket.emit('message', data, isBinary);
        },
        (err: unknown) => {
          emu.logger.error({ err }, 'room server failed to load');
          socket.close(1011, 'room server unavailable');
        },
      );
    },
  });
}
