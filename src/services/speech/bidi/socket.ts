import type { FastifyInstance } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { speechSocketRoute } from '../ws/socket.js';
import { openBidiSession } from './model.js';
import { BIDI_PATH, bidiClientMessages, bidiServerMessages } from './schema.js';
import { bidiSettingsOf } from './settings.js';
import { bidiSessions } from './state.js';

/**
 * `/ws/v1/t2a_v2_bidi` on both speech listeners: the admission, refusals, wire and journal of the
 * speech socket (ws/socket.ts), with the bidirectional protocol of bidi/model.ts. The greeting carries
 * `connect_id`, a 15-digit id from the seeded stream, which is also the session id until the client
 * names its own (E5).
 */
export async function bidiSocketRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  const sessions = bidiSessions(emu);
  speechSocketRoute(app, emu, BIDI_PATH, {
    messages: bidiClientMessages,
    serverMessages: bidiServerMessages,
    ids: (number, traceId) => ({ sessionId: number, connectId: number, traceId }),
    open: (o) => {
      const session = openBidiSession(emu, o.port, {
        account: o.account,
        area: o.area,
        ids: { ...o.ids, connectId: o.ids.connectId! },
        settings: bidiSettingsOf(o.account),
        newTrace: () => emu.ids.traceId(o.account.id),
        now: () => emu.clock.now(),
      });
      o.journal(session.journal.record);
      const remove = sessions.add(o.account.id, () => session.view());
      o.port.signal.addEventListener('abort', remove);
      return session;
    },
  });
}
