/**
 * With a data dir, no answer leaves before the changes made so far are on disk: what a client saw
 * acknowledged survives `kill -9`. When they cannot be saved (a full or read-only disk) the answer
 * becomes the family's internal error instead (its error handler renders the StorageError), and that
 * error answer itself does not wait again: it is sent at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Emulator } from './emulator.js';

export function installDurableAnswers(app: FastifyInstance, emu: Emulator): void {
  const refused = new WeakSet<FastifyRequest>();
  app.addHook('onSend', async (req, _reply, payload) => {
    if (refused.has(req)) return payload;
    try {
      await emu.persist();
    } catch (err) {
      refused.add(req);
      throw err;
    }
    return payload;
  });
}
