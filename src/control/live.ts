import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import type { JournalEntry, JournalEvent } from '../core/journal/journal.js';
import { entryView } from './journal.js';

/** A comment line now and then keeps proxies from closing a quiet feed. */
const KEEPALIVE_MS = 15_000;

/**
 * How far a subscriber may fall behind: bytes written but not yet taken by the client. A feed past it is
 * cut (EventSource reconnects after `retry`, and the journal itself has what was missed), so a subscriber
 * that never reads cannot make the emulator hold every event since it stopped.
 */
export const LIVE_BACKLOG_BYTES = 1024 * 1024;

/** Writes to a feed until its unread backlog passes `limit`, then destroys it once and calls `onCut`. */
export function boundedFeed(out: NodeJS.WritableStream & { writableLength: number; destroy(): void }, limit: number, onCut: () => void) {
  let cut = false;
  return (text: string): void => {
    if (cut) return;
    if (out.writableLength > limit) {
      cut = true;
      out.destroy();
      onCut();
      return;
    }
    out.write(text);
  };
}

/**
 * `GET /_emulator/journal/live`: the journal as Server-Sent Events, one `entry` event each time an entry
 * starts or finishes (`{"event":"new"|"finished","entry":{…}}`). EventSource cannot send headers, so
 * this route also takes the control token as `?token=` (checked by the control plane's hook).
 */
export async function liveJournal(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const { emu } = opts;
  const open = new Set<() => void>();

  // Open feeds end when the emulator closes, so close() never waits on them.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  // No HEAD twin: it would open a feed that never ends.
  app.get(
    '/journal/live',
    { exposeHeadRoute: false, config: { control: { query: ['token'], tokenInQuery: true } } },
    (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        // A hijacked reply skips the send path: keep what the hooks so far set (CORS headers among them).
        ...(reply.getHeaders() as Record<string, string>),
      });
      res.write(`retry: 1000\n: journal feed\n\n`);
      const write = boundedFeed(res, LIVE_BACKLOG_BYTES, () => {
        emu.logger.info({ path: '/_emulator/journal/live' }, `a live journal subscriber fell ${LIVE_BACKLOG_BYTES} bytes behind: its feed is cut`);
        end();
      });
      const send = (event: JournalEvent, entry: JournalEntry) => {
        write(`event: entry\ndata: ${JSON.stringify({ event, entry: entryView(entry) })}\n\n`);
      };
      const unwatch = emu.journal.watch(send);
      const keepalive = setInterval(() => write(': keepalive\n\n'), KEEPALIVE_MS).unref();
      const end = () => {
        if (!open.delete(end)) return;
        unwatch();
        clearInterval(keepalive);
        res.end();
      };
      open.add(end);
      req.raw.once('close', end);
    },
  );
}
