import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import type { JournalEntry, JournalEvent } from '../core/journal.js';
import { entryView } from './journal.js';

/** A comment line now and then keeps proxies from closing a quiet feed. */
const KEEPALIVE_MS = 15_000;

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
      const send = (event: JournalEvent, entry: JournalEntry) => {
        res.write(`event: entry\ndata: ${JSON.stringify({ event, entry: entryView(entry) })}\n\n`);
      };
      const unwatch = emu.journal.watch(send);
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS).unref();
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
